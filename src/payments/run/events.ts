import { createHash } from "node:crypto";
import type { PaymentStatus } from "../../protocol/index.js";
import type { Payer, PaymentEvent, PaymentEvents, PaymentFactsSeen } from "../ports/index.js";
import type { AmountLimits, ChosenOffer, Reason } from "../rules/index.js";
import type { RunFacts } from "./report.js";

/**
 * Payment events as the run tells them (ports/events.ts): what a step's event carries, and the one
 * way every part of `run/` emits, which never throws into a payment and never waits on a watcher.
 */

/** What a payment run is given beside its ledger, observer and facts. */
export interface RunHooks {
  /** Unexpected failures, with a few words on where (the client hears only a stable code). */
  onError?: (error: unknown, context: string) => void;
  /** Where the run's steps are told (the audit trail, metrics, traces). */
  events?: PaymentEvents;
  /** The amount limits in force when the run began (a measured budget's limits take over). */
  limits?: AmountLimits;
}

/** Tell `events` about `make()`'s event; a watcher (or building the event) that throws is ignored. */
export function tell(events: PaymentEvents | undefined, make: () => PaymentEvent): void {
  if (!events) return;
  try {
    events.emit(make());
  } catch {
    // A watcher's failure is its own (the port's contract): the payment goes on.
  }
}

/** The SHA-256 (hex) of the signed authorization's JSON, keys sorted: never the signature itself. */
export function signatureHashOf(authorization: Record<string, string>): string {
  const sorted = Object.fromEntries(Object.entries(authorization).sort(([a], [b]) => (a < b ? -1 : 1)));
  return createHash("sha256").update(JSON.stringify(sorted)).digest("hex");
}

/** The facts a step's event carries, copied (a watcher may keep them). */
export function factsSeen(facts: RunFacts): PaymentFactsSeen {
  return {
    paymentId: facts.paymentId,
    scopeId: facts.scopeId,
    caller: facts.caller ?? null,
    wallet: facts.wallet,
    service: facts.service,
    network: facts.network,
    asset: facts.asset,
    payTo: facts.payTo,
    amount: facts.amount,
  };
}

/** The steps whose event carries the limits in force: the admission's decision. */
const WITH_LIMITS: ReadonlySet<PaymentStatus> = new Set(["quoted", "refused", "reserved"]);

/** A run's step as an event. */
export function stepEvent(
  facts: RunFacts,
  status: PaymentStatus,
  at: Date,
  said: { reason?: unknown; message?: unknown; transaction?: unknown },
  seen: { limits?: AmountLimits | undefined; signatureHash?: string | undefined },
): PaymentEvent {
  const { limits, signatureHash } = seen;
  return {
    kind: "step",
    at,
    payment: factsSeen(facts),
    status,
    ...(typeof said.reason === "string" ? { reason: said.reason as Reason } : {}),
    ...(typeof said.message === "string" ? { message: said.message } : {}),
    ...(typeof said.transaction === "string" ? { txHash: said.transaction } : {}),
    ...(limits && WITH_LIMITS.has(status)
      ? {
          limits: {
            perTransaction: limits.perTransaction,
            perRequest: limits.perRequest,
            daily: limits.daily,
          },
        }
      : {}),
    ...(signatureHash && status === "signed" ? { signatureHash } : {}),
  };
}

/** Why something was refused, as a refusal says it. */
export type Said = { reason: Reason; message: string };

/** A payment refused before it existed (`PaymentPipeline.refuseEarly`, a refused quote) as an event. */
export function refusedEarly(
  payer: Pick<Payer, "scopeId" | "caller" | "wallet">,
  at: Date,
  said: Said & { service?: string | undefined; chosen?: ChosenOffer | undefined },
): PaymentEvent {
  // A quote refused after it chose an offer (over a limit): what it would have paid.
  const chosen = said.chosen;
  const offer = chosen && { amount: chosen.amount, network: chosen.offer.network, payTo: chosen.offer.payTo };
  return {
    kind: "refused_early",
    at,
    scopeId: payer.scopeId,
    caller: payer.caller ?? null,
    ...(payer.wallet ? { wallet: payer.wallet.address } : {}),
    ...(said.service ? { service: said.service } : {}),
    reason: said.reason,
    message: said.message,
    ...(offer ? { offer } : {}),
  };
}
