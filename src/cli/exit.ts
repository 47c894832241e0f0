import type { FinishPayload } from "../client/index.js";

/**
 * The terminal chat's exit codes (documented in docs/clients.md and `--help`): 0 when the turn
 * ended well, and one code per way it did not, so a script can branch on what happened.
 */
export const EXIT = {
  ok: 0,
  error: 1,
  usage: 2,
  /** Refused before the stream (problem+json), or no connection. */
  refused: 3,
  limitExceeded: 4,
  insufficientBalance: 5,
  paymentFailed: 6,
  serviceUnavailable: 7,
  /** A payment awaits approval and was left pending (no key file, or not answered). */
  approvalRequired: 8,
  /** A payment was sent and its outcome is not known yet: do not pay again. */
  paymentUnclear: 9,
  interrupted: 130,
} as const;

const BY_FINISH: Record<FinishPayload["finishReason"], number> = {
  stop: EXIT.ok,
  "payment-complete": EXIT.ok,
  error: EXIT.error,
  "limit-exceeded": EXIT.limitExceeded,
  "insufficient-balance": EXIT.insufficientBalance,
  "payment-failed": EXIT.paymentFailed,
  "payment-unclear": EXIT.paymentUnclear,
  "service-unavailable": EXIT.serviceUnavailable,
  "approval-required": EXIT.approvalRequired,
};

/** The exit code of a turn that ended with this finish reason. */
export function exitCodeFor(reason: FinishPayload["finishReason"]): number {
  return BY_FINISH[reason];
}
