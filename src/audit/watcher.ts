import { scrubSecrets } from "../log/index.js";
import { formatUsd } from "../money/index.js";
import type { PaymentEvent, PaymentEvents } from "../payments/index.js";
import type { AuditEntry } from "./log.js";

/**
 * What becomes an audit record (docs/audit.md#what-is-recorded): each payment event (the payments'
 * port) and each operator action, as plain facts picked field by field, so nothing else an event or
 * an action might carry (a token, a key) can reach the trail.
 */

type Appender = { append(entry: AuditEntry): void };

const money = (atomic: bigint) => formatUsd(atomic);

/**
 * A URL or text from a request, as the trail keeps it for good (a hash chain cannot be scrubbed
 * later): credentials and key-like query values masked, as in the logs.
 */
const scrubbed = <T extends string | undefined>(text: T): T =>
  (text === undefined ? text : scrubSecrets(text)) as T;

/** Payment ids seen in steps, with their caller and request, for the events that carry neither. */
class RecentPayments {
  private readonly seen = new Map<string, { caller: string | null; requestId: string }>();
  constructor(private readonly max = 10_000) {}
  note(paymentId: string, caller: string | null, requestId: string): void {
    if (this.seen.has(paymentId)) return;
    this.seen.set(paymentId, { caller, requestId });
    if (this.seen.size > this.max) this.seen.delete(this.seen.keys().next().value as string);
  }
  of(paymentId: string): { caller: string | null; requestId: string | null } {
    return this.seen.get(paymentId) ?? { caller: null, requestId: null };
  }
}

function stepEntry(event: Extract<PaymentEvent, { kind: "step" }>): AuditEntry {
  const p = event.payment;
  const { limits } = event;
  return {
    at: event.at,
    kind: `payment.${event.status}`,
    caller: p.caller,
    requestId: p.scopeId,
    paymentId: p.paymentId,
    data: {
      status: event.status,
      wallet: p.wallet,
      service: scrubbed(p.service),
      network: p.network,
      asset: p.asset,
      payTo: p.payTo,
      amountAtomic: p.amount.toString(),
      amountUsd: money(p.amount),
      reason: event.reason,
      message: scrubbed(event.message),
      txHash: event.txHash,
      limits: limits && {
        perTransaction: money(limits.perTransaction),
        perRequest: money(limits.perRequest),
        daily: money(limits.daily),
      },
      signatureHash: event.signatureHash,
    },
  };
}

function entryOf(event: PaymentEvent, recent: RecentPayments): AuditEntry {
  switch (event.kind) {
    case "step":
      recent.note(event.payment.paymentId, event.payment.caller, event.payment.scopeId);
      return stepEntry(event);
    case "refused_early": {
      const { waiting } = event;
      // What it would have paid: an approved payment kept waiting, or the offer a quote chose.
      const priced = waiting ?? event.offer;
      return {
        at: event.at,
        kind: "payment.refused",
        caller: event.caller,
        requestId: event.scopeId,
        ...(waiting ? { paymentId: waiting.paymentId } : {}),
        data: {
          ...(waiting ? { waiting: true } : { early: true }),
          wallet: event.wallet,
          service: scrubbed(event.service),
          ...(priced
            ? {
                network: priced.network,
                payTo: priced.payTo,
                amountAtomic: priced.amount.toString(),
                amountUsd: money(priced.amount),
              }
            : {}),
          reason: event.reason,
          message: scrubbed(event.message),
        },
      };
    }
    case "reconciled":
      return {
        at: event.at,
        kind: "payment.reconciled",
        // The row's own caller and request: another instance (since stopped) may have sent it.
        caller: event.payment.caller,
        requestId: event.payment.scopeId,
        paymentId: event.paymentId,
        data: { by: "reconciler", from: event.from, to: event.to, txHash: event.txHash },
      };
    case "approval_answered":
      return {
        at: event.at,
        kind: "approval.answered",
        ...recent.of(event.paymentId),
        paymentId: event.paymentId,
        data: { via: event.via, wallet: event.wallet, answer: event.answer },
      };
  }
}

/** The audit trail as a payment events watcher: each event is one record, queued. */
export function auditPaymentEvents(log: Appender): PaymentEvents {
  const recent = new RecentPayments();
  return {
    emit(event) {
      log.append(entryOf(event, recent));
    },
  };
}
