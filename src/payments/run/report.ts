import { AppError } from "../../errors/index.js";
import { formatUsd } from "../../money/index.js";
import {
  networkLabel,
  type PaymentStatus,
  type PaymentSummary,
  type PaymentUpdate,
  type TabMeter,
  utcClock,
} from "../../protocol/index.js";
import type { PaymentFacts } from "../ports/index.js";
import {
  type BudgetBase,
  budgetMeter,
  codeOf,
  isFinal,
  type PaymentObserver,
  type PaymentOutcome,
  type Reason,
} from "../rules/index.js";

/**
 * What a payment run tells the world, as pure functions of its facts: the `p:` update, the turn's
 * summary line, the outcome, and the one error a failure reports (run.ts moves the row and calls
 * these in step).
 */

/** What one payment is about, fixed from the quote on. */
export type RunFacts = Omit<PaymentFacts, "requirement"> & {
  /** The service's name, as discovery listed it, when known. Untrusted text, for display. */
  serviceName?: string;
  /** The bearer identity of the request that makes it (kept on its row), or null. */
  caller?: string | null;
  /** Paid from a tab: which, and what it holds (the reservation updates it); never a ledger field. */
  tabMeter?: TabMeter;
  /** The open tab the request names, paying or not: the budget meter shows it. Never a ledger field. */
  openTab?: TabMeter;
};

/** The sentences a payment's updates carry for people: the network by name, times in UTC. */
export const sayings = {
  quoted: (facts: RunFacts) =>
    `${facts.service} costs $${formatUsd(facts.amount)} on ${networkLabel(facts.network)}`,
  approve: (facts: RunFacts, expiresAt: Date) =>
    `Approve $${formatUsd(facts.amount)} to ${facts.service} in your wallet before ${utcClock(expiresAt)}.`,
  undelivered: ({ transaction }: { transaction: string }) =>
    `The payment settled on chain (${transaction}), but the service did not return its answer.`,
};

/** The `p:` update for this payment in `status`, with the budget meter when it was measured. */
export function updateOf(
  facts: RunFacts,
  status: PaymentStatus,
  budget: BudgetBase | undefined,
  extra: Partial<PaymentUpdate>,
): PaymentUpdate {
  const meter = budget ? budgetMeter(budget, facts.amount, status) : undefined;
  return {
    paymentId: facts.paymentId,
    service: { url: facts.service, ...(facts.serviceName ? { name: facts.serviceName } : {}) },
    amount: { atomic: facts.amount.toString(), usd: formatUsd(facts.amount), asset: facts.asset },
    network: facts.network,
    payTo: facts.payTo,
    status,
    ...(meter ? { budget: facts.openTab ? { ...meter, tab: facts.openTab } : meter } : {}),
    ...(facts.tabMeter ? { tab: facts.tabMeter } : {}),
    ...extra,
  };
}

/** The turn's summary line for this payment in `status`. */
export function summaryOf(
  facts: RunFacts,
  status: PaymentStatus,
  extra: Partial<PaymentUpdate>,
): PaymentSummary {
  return {
    paymentId: facts.paymentId,
    status,
    service: facts.service,
    amountUsd: formatUsd(facts.amount),
    network: facts.network,
    ...(extra.transaction ? { transaction: extra.transaction } : {}),
    ...(extra.approval ? { expiresAt: extra.approval.expiresAt } : {}),
  };
}

export function outcomeOf(
  facts: RunFacts,
  status: PaymentOutcome["status"],
  extra: Partial<PaymentOutcome> = {},
): PaymentOutcome {
  return {
    status,
    paymentId: facts.paymentId,
    amountUsd: formatUsd(facts.amount),
    network: facts.network,
    ...extra,
  };
}

/** An outcome that ends the turn with its reason's finish reason: reported once, returned. */
export function reportFailure(
  observer: PaymentObserver,
  facts: RunFacts,
  failure: {
    status: PaymentOutcome["status"];
    reason: Reason;
    message: string;
    details: Record<string, unknown>;
    extra: Partial<PaymentOutcome>;
  },
): PaymentOutcome {
  const { status, reason, message, details, extra } = failure;
  // A payment whose outcome is not known may have gone through: never "failed", nor refused for
  // funds on a service's word (a user told so pays again). Its own code says so, and the message
  // names the payment to look up.
  const unclear = status === "unknown" && ["payment_failed", "insufficient_balance"].includes(codeOf(reason));
  const code = unclear ? "payment_unclear" : codeOf(reason);
  const said = unclear ? unclearMessage(message, facts.paymentId) : message;
  const all = { paymentId: facts.paymentId, ...details };
  observer.error(new AppError(code, said, { details: all }));
  return outcomeOf(facts, status, { ...extra, error: { code, reason, message: said, details: all } });
}

/**
 * What the client is told of a payment whose outcome is not known: what happened, that it may
 * have gone through and is being checked against the chain, not to pay again, and where to read
 * its final state (docs/protocol.md, `payment_unclear`).
 */
export function unclearMessage(what: string, paymentId: string): string {
  return `${what} Payment ${paymentId} may have gone through: it is being checked against the chain. Do not pay again; its final state is at GET /api/payments/${paymentId}.`;
}

/**
 * What a run that threw in `status` ends with (`PaymentRun.crashed`): a final run keeps its
 * outcome; one with no row yet failed with nothing sent; one recorded may have paid (unknown).
 */
export function crashOf(
  status: PaymentStatus,
  recorded: boolean,
  error: unknown,
): { ended: PaymentOutcome["status"] } | { status: "failed" | "unknown"; reason: Reason; message: string } {
  if (isFinal(status))
    return { ended: status === "settled" ? "paid" : status === "refused" ? "refused" : "failed" };
  const known =
    error instanceof AppError && (error.code === "store_unavailable" || error.code === "internal");
  const reason: Reason = known ? (error.code as Reason) : "internal";
  if (!recorded) {
    return { status: "failed", reason, message: "An internal step of the payment failed; nothing was paid." };
  }
  const message = "The payment was sent but its outcome could not be recorded yet; it will be reconciled.";
  return { status: "unknown", reason: "outcome_unrecorded", message };
}
