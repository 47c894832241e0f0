import type { FinishReason } from "../../errors/index.js";
import { formatUsd } from "../../money/index.js";
import type { FinishPayload, PaymentSummary, PaymentUpdate, StreamEvent } from "../../protocol/index.js";
import { networkLabel } from "../../protocol/index.js";
import type { Ledger, PaymentRecord } from "../ports/index.js";
import { storedServiceName } from "../ports/index.js";
import { isUnresolved } from "../rules/index.js";

/**
 * Answers rebuilt from the ledger (docs/protocol.md, "After a crash"). When the process answering
 * an approval or a request with an `Idempotency-Key` dies, its claim's lease lapses and the next
 * attempt with the same key takes it over. It must not run the payment again: the ledger rows are
 * the truth, and the answer is rebuilt from them (status, amount, transaction), never re-signed.
 * The service's data itself is not kept in the ledger, so the rebuilt answer says so.
 */

export interface Rebuilt {
  events: StreamEvent[];
  /** Every payment is at an end the ledger will keep: the answer can be stored for replay. */
  final: boolean;
}

function update(record: PaymentRecord): PaymentUpdate {
  const name = storedServiceName(record);
  return {
    paymentId: record.paymentId,
    status: record.status,
    service: { url: record.service, ...(name ? { name } : {}) },
    amount: { atomic: record.amount.toString(), usd: formatUsd(record.amount), asset: record.asset },
    network: record.network,
    payTo: record.payTo,
    ...(record.txHash ? { transaction: record.txHash } : {}),
    ...(record.payer ? { payer: record.payer } : {}),
  };
}

function summary(record: PaymentRecord): PaymentSummary {
  return {
    paymentId: record.paymentId,
    status: record.status,
    service: record.service,
    amountUsd: formatUsd(record.amount),
    network: record.network,
    ...(record.txHash ? { transaction: record.txHash } : {}),
    ...(record.status === "awaiting_approval" && record.expiresAt
      ? { expiresAt: record.expiresAt.toISOString() }
      : {}),
  };
}

function sentence(record: PaymentRecord): string {
  const what = `$${formatUsd(record.amount)} to ${record.service} on ${networkLabel(record.network)}`;
  switch (record.status) {
    case "settled":
      return `Paid ${what}; transaction ${record.txHash ?? "(not recorded)"}.`;
    case "failed":
      return `The payment of ${what} failed; nothing was paid.`;
    case "rejected":
      return `The payment of ${what} was declined; nothing was paid.`;
    case "expired":
      return `The approval of ${what} expired; nothing was paid.`;
    case "released":
      return `The payment of ${what} was not sent; nothing was paid.`;
    case "awaiting_approval":
      return `The payment of ${what} awaits approval in the wallet.`;
    default:
      return `The payment of ${what} is being checked on chain; do not pay it again.`;
  }
}

/** The answer the ledger gives for these payments (oldest first). */
export function rebuild(records: readonly PaymentRecord[], model: string): Rebuilt {
  const events: StreamEvent[] = [
    {
      type: "text",
      // Not "interrupted": also a request whose payment was still unclear when its stream ended (h51).
      text: "This was asked before; this is what the payment ledger holds for it now. ",
    },
  ];
  for (const record of records) events.push({ type: "payment", payment: update(record) });
  events.push({ type: "text", text: records.map(sentence).join(" ") });
  if (records.some((r) => r.status === "settled")) {
    events.push({
      type: "text",
      text: " The service's answer is not kept in the ledger, so it cannot be shown again.",
    });
  }

  const unclear = records.filter((r) => isUnresolved(r.status));
  const failed = records.filter((r) => r.status === "failed");
  const awaiting = records.filter((r) => r.status === "awaiting_approval" && r.expiresAt);
  let finishReason: FinishReason = "stop";
  if (unclear.length > 0) {
    finishReason = "payment-unclear";
    for (const r of unclear) {
      events.push({
        type: "error",
        error: {
          code: "payment_unclear",
          message: `The payment ${r.paymentId} of $${formatUsd(r.amount)} to ${r.service} may have gone through and is being checked on chain; it will not be sent again: do not pay it again.`,
          paymentId: r.paymentId,
        },
      });
    }
  } else if (failed.length > 0 && !records.some((r) => r.status === "settled")) {
    finishReason = "payment-failed";
    for (const r of failed) {
      events.push({
        type: "error",
        error: {
          code: "payment_failed",
          message: `The payment of $${formatUsd(r.amount)} to ${r.service} failed; nothing was paid.`,
          paymentId: r.paymentId,
        },
      });
    }
  } else if (awaiting.length > 0) finishReason = "approval-required";
  else if (records.some((r) => r.status === "settled")) finishReason = "payment-complete";

  const transactions = records.flatMap((r) => (r.status === "settled" && r.txHash ? [r.txHash] : []));
  const finish: FinishPayload = {
    finishReason,
    ...(transactions.length > 0 ? { transactionHash: transactions.at(-1) } : {}),
    transactions,
    payments: records.map(summary),
    usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
    model,
    provider: "ledger",
    modelId: "ledger",
    ...(awaiting.length > 0
      ? {
          approvals: awaiting.map((r) => ({
            paymentId: r.paymentId,
            expiresAt: (r.expiresAt as Date).toISOString(),
          })),
        }
      : {}),
  };
  events.push({ type: "finish", finish });
  return { events, final: unclear.length === 0 };
}

/** The rebuilder the HTTP layer calls for a key whose attempt died (its port: src/http/idempotency.ts). */
export function ledgerRebuilder(ledger: Pick<Ledger, "get" | "listByScope">) {
  return {
    /**
     * Undefined while the payment still awaits approval (the dead attempt paid nothing: run it
     * afresh), or when it is not this wallet's and caller's (the checks of a fresh run answer that).
     */
    async approval(
      paymentId: string,
      model: string,
      who: { wallet: string; caller: string | null },
    ): Promise<Rebuilt | undefined> {
      const record = await ledger.get(paymentId);
      if (!record || record.status === "awaiting_approval") return undefined;
      if (record.wallet !== who.wallet || (record.caller ?? null) !== who.caller) return undefined;
      return rebuild([record], model);
    },
    /** Undefined when the request reserved nothing: it may run afresh. */
    async request(requestId: string, model: string): Promise<Rebuilt | undefined> {
      const records = await ledger.listByScope(requestId);
      return records.length > 0 ? rebuild(records, model) : undefined;
    },
  };
}
