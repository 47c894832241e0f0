import type { AppError, ErrorCode } from "../../errors/index.js";
import type { SafeResponse } from "../../outbound/index.js";
import type { PaymentSummary, PaymentUpdate } from "../../protocol/index.js";

/**
 * Why a payment ended the way it did: a closed set of reasons, each mapped to one error code in
 * this one table (docs/payments.md, "Outcomes"). The `p:` update carries the reason, the `e:` line
 * its code. A paid service's own words (a 402's error, an HTTP status) go in `detail`, never here.
 */
export const REASONS = {
  // Before any quote: nothing to stream but the error.
  no_wallet: "payment_unavailable",
  origin_not_allowed: "limit_exceeded",
  target_blocked: "payment_unavailable",
  service_unavailable: "service_unavailable",
  /** The service answered the unpaid call with a 4xx other than 402, 408 or 429: the call is at fault. */
  service_refused: "service_refused",
  unreadable_demand: "payment_failed",
  network_not_allowed: "limit_exceeded",
  no_acceptable_offer: "payment_unavailable",
  /** The wallet is not one the caller's key may pay from (its `wallets`). */
  wallet_not_allowed: "limit_exceeded",
  /** `pay_quote` with an id this service did not give this caller (altered, forged, another's). */
  quote_invalid: "quote_invalid",
  /** `pay_quote` with a genuine id past its time, never paid: quote again. */
  quote_expired: "quote_expired",
  // After the quote, before anything is signed or sent.
  invalid_max_usd: "payment_unavailable",
  price_changed: "price_changed",
  too_little_time: "deadline_exceeded",
  /** The request's idempotency claim was lost before the reservation: another attempt answers it. */
  claim_lost: "idempotency_conflict",
  no_signer: "payment_unavailable",
  /** The operator paused payments (all, or the caller's key): checked before a server key signs. */
  payments_paused: "payments_paused",
  /** The caller's operator key was revoked or expired while its request ran: nothing more is signed. */
  key_ended: "payment_unavailable",
  limit_exceeded: "limit_exceeded",
  /** The request's tab token names no tab it may pay from (another caller's, another wallet's, closed). */
  tab_unusable: "tab_invalid",
  insufficient_balance: "insufficient_balance",
  balance_unreadable: "payment_failed",
  /** A smart-contract wallet, and a token that cannot check its signature (EIP-1271). */
  wallet_unsupported: "payment_unavailable",
  chain_unreadable: "payment_failed",
  signing_failed: "payment_failed",
  store_unavailable: "store_unavailable",
  internal: "internal",
  // After sending: unclear until the chain says (unknown), or known.
  no_response: "payment_failed",
  payment_rejected: "payment_failed",
  rejected_insufficient_funds: "insufficient_balance",
  no_settlement_proof: "payment_failed",
  service_error_after_payment: "payment_failed",
  redirected_after_payment: "payment_failed",
  /** Settled on chain, and the service never answered: paid, not delivered (never retried as a 5xx). */
  settled_undelivered: "service_undelivered",
  outcome_unrecorded: "payment_failed",
} as const satisfies Record<string, ErrorCode>;

export type Reason = keyof typeof REASONS;

/** The error code a reason maps to. */
export function codeOf(reason: Reason): ErrorCode {
  return REASONS[reason];
}

/** A payment's end, as the domain sees it. The tool layer turns it into what the model reads. */
export interface PaymentOutcome {
  status: "paid" | "free" | "refused" | "failed" | "unknown" | "awaiting_approval" | "rejected" | "expired";
  paymentId?: string;
  /** With `awaiting_approval`: until when the wallet can approve (ISO-8601). */
  approvalExpiresAt?: string;
  amountUsd?: string;
  network?: string;
  transaction?: string;
  payer?: string;
  /** The service's answer (free, or delivered after paying). Untrusted bytes. */
  response?: SafeResponse;
  error?: {
    code: ErrorCode;
    reason: Reason;
    message: string;
    /** Facts a client can act on (limit, remaining, price...); never a service's raw text as a code. */
    details?: Record<string, unknown>;
  };
}

/**
 * The narrow port a payment reports through: the `p:` updates, the turn's summary (`d:`), and the
 * failure that ends the turn with its finish reason (`e:`). The agent implements it per turn.
 */
export interface PaymentObserver {
  update(update: PaymentUpdate): void;
  summary(summary: PaymentSummary): void;
  error(error: AppError): void;
  /**
   * Takes a payment's last ledger write (the move to `settled`) to finish beside the answer: the
   * outcome is returned before the write, whose `p:` line (or failure) follows once it is durable.
   * Whoever offers this must wait for every held write before it ends (the turn, before `d:`).
   * Without it the run awaits the write before returning its outcome.
   */
  hold?(work: Promise<unknown>): void;
}
