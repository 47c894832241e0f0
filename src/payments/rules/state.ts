import type { PaymentStatus } from "../../protocol/stream.js";

/**
 * The payment state machine, pure. Every ledger write goes through `assertTransition`, so a payment
 * can never move backwards (a settled payment cannot be "released") nor be signed twice (nothing
 * leads back to `reserved`). docs/payments.md has the diagram and the reasoning.
 */

/** The statuses a ledger row can hold. `quoted` and `refused` exist only as stream updates. */
export const LEDGER_STATUSES = [
  "reserved",
  "signed",
  "submitted",
  "settled",
  "failed",
  "unknown",
  "released",
  "awaiting_approval",
  "rejected",
  "expired",
] as const satisfies readonly PaymentStatus[];
export type LedgerStatus = (typeof LEDGER_STATUSES)[number];

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

/** Statuses whose amount counts against limits: money that is, or may be, gone. */
const SPENT: ReadonlySet<PaymentStatus> = new Set(["reserved", "signed", "submitted", "settled", "unknown"]);

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
 * Whether a payment in this status counts as spent. Pending statuses count (the money may leave at
 * any moment) and `unknown` counts (it may already have left); only `failed` and `released`, where
 * we know no money moved, free the budget. This is what makes "settled + pending <= limit" hold.
 */
export function countsAsSpent(status: PaymentStatus): boolean {
  return SPENT.has(status);
}

/** Statuses that count as spent, for SQL `IN (...)` filters. */
export const SPENT_STATUSES: readonly LedgerStatus[] = LEDGER_STATUSES.filter(countsAsSpent);

const TERMINAL: ReadonlySet<PaymentStatus> = new Set([
  "settled",
  "failed",
  "released",
  "refused",
  "rejected",
  "expired",
]);

/**
 * A terminal status has no way out: the payment's outcome is final. `quoted` is not terminal (a
 * quote leads to a reservation or a refusal) even though no ledger row ever moves out of it.
 */
export function isTerminal(status: PaymentStatus): boolean {
  return TERMINAL.has(status);
}

/** Whether the status is one a ledger row may hold. */
export function isLedgerStatus(status: string): status is LedgerStatus {
  return (LEDGER_STATUSES as readonly string[]).includes(status);
}
