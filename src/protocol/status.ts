import type { PaymentStatus } from "./stream.js";

/**
 * One table says what each payment status means; every group of statuses is derived from it
 * (docs/payments.md, "Statuses"). The words:
 * - **spent**: money that is gone or may be gone (`settled`, `unknown`);
 * - **pending**: money held while a payment is under way (`reserved`, `signed`, `submitted`);
 * - **committed**: spent + pending, what holds budget against every limit;
 * - **final**: no way out of the status; `unknown` holds budget and is not final (a reconciler
 *   resolves it from the chain);
 * - **in flight**: the turn that started the payment still moves it on.
 */
export interface PaymentStatusFacts {
  /** A ledger row can hold it (`quoted` and `refused` exist only as stream updates). */
  row: boolean;
  /** Where its amount stands in the budget meter. */
  budget: "spent" | "pending" | "none";
  /** No way out: the outcome will not change. */
  final: boolean;
  /** Still moving in the turn that started it. */
  inFlight: boolean;
  /** How a client colours it. */
  tone: "neutral" | "progress" | "ok" | "bad" | "wait";
}

export const PAYMENT_STATUS = {
  quoted: { row: false, budget: "none", final: false, inFlight: true, tone: "neutral" },
  refused: { row: false, budget: "none", final: true, inFlight: false, tone: "bad" },
  reserved: { row: true, budget: "pending", final: false, inFlight: true, tone: "progress" },
  signed: { row: true, budget: "pending", final: false, inFlight: true, tone: "progress" },
  submitted: { row: true, budget: "pending", final: false, inFlight: true, tone: "progress" },
  settled: { row: true, budget: "spent", final: true, inFlight: false, tone: "ok" },
  failed: { row: true, budget: "none", final: true, inFlight: false, tone: "bad" },
  unknown: { row: true, budget: "spent", final: false, inFlight: false, tone: "neutral" },
  released: { row: true, budget: "none", final: true, inFlight: false, tone: "neutral" },
  awaiting_approval: { row: true, budget: "none", final: false, inFlight: false, tone: "wait" },
  rejected: { row: true, budget: "none", final: true, inFlight: false, tone: "bad" },
  expired: { row: true, budget: "none", final: true, inFlight: false, tone: "bad" },
} as const satisfies Readonly<Record<PaymentStatus, PaymentStatusFacts>>;

/** The statuses a ledger row can hold (`row: true` in the table). */
export type LedgerStatus = {
  [S in PaymentStatus]: (typeof PAYMENT_STATUS)[S]["row"] extends true ? S : never;
}[PaymentStatus];

export type StatusTone = PaymentStatusFacts["tone"];

/** The statuses whose facts pass `test`, in the table's order. */
export function statusesWhere(test: (facts: PaymentStatusFacts) => boolean): PaymentStatus[] {
  return (Object.keys(PAYMENT_STATUS) as PaymentStatus[]).filter((status) => test(PAYMENT_STATUS[status]));
}

/** The statuses a ledger row can hold, in the table's order. */
export const LEDGER_STATUSES = statusesWhere((facts) => facts.row) as readonly LedgerStatus[];

/** Whether a payment in this status holds budget (spent or pending). */
export function isCommitted(status: PaymentStatus): boolean {
  return PAYMENT_STATUS[status].budget !== "none";
}

/** Whether the status has no way out. */
export function isFinal(status: PaymentStatus): boolean {
  return PAYMENT_STATUS[status].final;
}

/**
 * The status a payment reads as at `now`: one awaiting approval past its window (`expiresAt`) can
 * no longer be approved (the desk refuses it) and reads `expired`, as the approval page shows it,
 * before the reconciler's next pass writes so in the ledger.
 */
export function statusAt<S extends string>(status: S, expiresAt: Date | null, now: Date): S | "expired" {
  const lapsed = status === "awaiting_approval" && expiresAt !== null && expiresAt <= now;
  return lapsed ? "expired" : status;
}

/**
 * Whether the outcome is still open: committed but not final (`reserved`, `signed`, `submitted`,
 * `unknown`). Money may still move; such a payment is resolved from the chain, never paid again.
 */
export function isUnresolved(status: PaymentStatus): boolean {
  return isCommitted(status) && !isFinal(status);
}

/**
 * The steps a payment's intent records at once (docs/payments.md#the-ledger): a row reserved with
 * its authorization, or approved in the wallet, is born `submitted` with this history.
 */
export const INTENT_STEPS = ["reserved", "signed", "submitted"] as const satisfies readonly LedgerStatus[];
