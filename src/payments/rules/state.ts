import { isCommitted, isUnresolved, LEDGER_STATUSES, type LedgerStatus } from "../../protocol/status.js";
import type { PaymentStatus } from "../../protocol/stream.js";

/**
 * The payment state machine, pure. Every ledger write goes through `assertTransition`, so a payment
 * can never move backwards (a settled payment cannot be "released") nor be signed twice (nothing
 * leads back to `reserved`). docs/payments.md has the diagram and the reasoning.
 */

/**
 * What each status means (budget, final, in flight) is src/protocol/status.ts, `PAYMENT_STATUS`,
 * shared with the clients; these names are re-exported for the payment code.
 */
export {
  isCommitted,
  isFinal,
  isUnresolved,
  LEDGER_STATUSES,
  type LedgerStatus,
} from "../../protocol/status.js";

const TRANSITIONS: Readonly<Record<PaymentStatus, readonly PaymentStatus[]>> = {
  // A quote is streamed before any row exists: it is refused, failed before anything was signed
  // or sent, or reserved (the row is born in the reservation, see `Ledger.reserve`).
  quoted: ["refused", "reserved", "failed", "awaiting_approval"],
  refused: [],
  // Stored, holding no budget, until the user's wallet answers: approved (the reservation checks
  // the limits as they are then), declined, too late, or refused because the service's terms
  // changed. docs/payments.md, "Approval".
  awaiting_approval: ["reserved", "rejected", "expired", "failed"],
  rejected: [],
  expired: [],
  // Nothing signed yet: the reservation either proceeds, is given back, or fails locally.
  reserved: ["signed", "released", "failed"],
  // A signature exists: it may already be usable by anyone holding it, so it can no longer be
  // "released"; a failure to hand it over cleanly is `unknown`, not `failed`.
  signed: ["submitted", "unknown", "failed"],
  submitted: ["settled", "failed", "unknown"],
  // Only a reconciler leaves `unknown`, from what the chain or facilitator says.
  unknown: ["settled", "failed"],
  settled: [],
  failed: [],
  released: [],
};

/** Whether `from -> to` is an allowed step. Staying in place is not a step. */
export function canTransition(from: PaymentStatus, to: PaymentStatus): boolean {
  return TRANSITIONS[from].includes(to);
}

/** Thrown for a step the state machine forbids: a bug in the caller, never a user error. */
export class IllegalTransitionError extends Error {
  override name = "IllegalTransitionError";
  constructor(
    readonly from: PaymentStatus,
    readonly to: PaymentStatus,
  ) {
    super(`illegal payment transition ${from} -> ${to}`);
  }
}

/** Throws IllegalTransitionError unless `from -> to` is allowed. */
export function assertTransition(from: PaymentStatus, to: PaymentStatus): void {
  if (!canTransition(from, to)) throw new IllegalTransitionError(from, to);
}

/**
 * Statuses that hold budget (committed: spent or pending), for SQL `IN (...)` filters. Pending
 * statuses count (the money may leave at any moment) and `unknown` counts (it may already have
 * left); only `failed` and `released`, where we know no money moved, free the budget. This is what
 * makes "settled + pending <= limit" hold.
 */
export const COMMITTED_STATUSES = LEDGER_STATUSES.filter(isCommitted);

/** Rows whose outcome is still open: committed but not final. The reconciler resolves them. */
export const UNRESOLVED_STATUSES = LEDGER_STATUSES.filter(isUnresolved);

/** Whether the status is one a ledger row may hold. */
export function isLedgerStatus(status: string): status is LedgerStatus {
  return (LEDGER_STATUSES as readonly string[]).includes(status);
}
