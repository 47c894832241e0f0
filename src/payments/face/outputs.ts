import { AppError } from "../../errors/index.js";
import { formatUsd } from "../../money/index.js";
import type { SafeResponse } from "../../outbound/index.js";
import { cleanUntrusted, nestsAtMost, type PaymentState, statusAt } from "../../protocol/index.js";
import { DIRECTORY_DOWN, type PayOutput } from "../../tools/contract.js";
import type { PaymentRecord } from "../ports/index.js";
import { codeOf, type PaymentObserver, type PaymentOutcome, REASONS, type Reason } from "../rules/index.js";
import type { Resumed } from "../run/index.js";

/**
 * What the face gives back, in the tool contract's shapes: a payment's outcome, a ledger row and
 * an approved payment's delivery. Everything from outside (a service's answer, a listing, a 402's
 * fields, a service's error text) goes through the one content rule on its way out.
 */

const MAX_DATA_CHARS = 8000;
/** Deeper JSON than this (a few KB can nest thousands deep) reaches the model as its text, unparsed. */
const MAX_DATA_DEPTH = 64;

/**
 * A service's body as data for the model, marked untrusted: parsed JSON when it is JSON within the
 * bound, else its first MAX_DATA_CHARS characters as text (a longer JSON answer included).
 */
export function untrustedData(response: SafeResponse): NonNullable<PayOutput["data"]> {
  const contentType = response.headers.get("content-type") ?? "application/octet-stream";
  const text = new TextDecoder().decode(response.body);
  let body: unknown = text.slice(0, MAX_DATA_CHARS);
  if (/json/i.test(contentType) && !response.truncated && text.length <= MAX_DATA_CHARS) {
    try {
      const parsed: unknown = JSON.parse(text);
      if (nestsAtMost(parsed, MAX_DATA_DEPTH)) body = parsed;
    } catch {
      // keep the bounded text
    }
  }
  return {
    untrusted: true,
    contentType,
    body,
    truncated: response.truncated || text.length > MAX_DATA_CHARS,
  };
}

/** The domain outcome as a caller reads it: the service's answer becomes untrusted data. */
export function toPayOutput(outcome: PaymentOutcome): PayOutput {
  const { response, error, ...rest } = outcome;
  return {
    ...rest,
    ...(response ? { data: untrustedData(response) } : {}),
    ...(error
      ? { error: { code: error.code, reason: error.reason, message: error.message, ...error.details } }
      : {}),
  };
}

/** The content rule on an output from outside; the output says how many characters were removed. */
export async function fromOutside<T extends object>(output: Promise<T>): Promise<T> {
  const { value, removed } = cleanUntrusted(await output);
  return removed > 0 ? { ...value, removedCharacters: removed } : value;
}

/**
 * An approved payment's delivery as a `pay_and_fetch` result, with the service it paid: the chat's
 * approval prelude and `answerApproval` both end with it.
 */
export async function resumedOutput(resumed: Resumed, observer: PaymentObserver): Promise<PayOutput> {
  const outcome = await resumed.run(observer);
  return fromOutside(
    Promise.resolve({
      ...toPayOutput(outcome),
      service: resumed.service,
      ...(resumed.serviceName ? { serviceName: resumed.serviceName } : {}),
    }),
  );
}

/** What a failed payment's row says as a stable reason: a pipeline reason, or the chain's verdict. */
function reasonOf(record: PaymentRecord): string | undefined {
  if (record.status !== "failed") return undefined;
  if (record.error && Object.hasOwn(REASONS, record.error)) return record.error;
  // The reconciler's only way to `failed`: the authorization (or blockhash) expired unused.
  return "expired_unused";
}

/** A ledger row as the client reads it: never the authorization, the approval terms or a signature. */
export function paymentState(record: PaymentRecord, now: Date): PaymentState {
  const reason = reasonOf(record);
  return {
    paymentId: record.paymentId,
    status: statusAt(record.status, record.expiresAt, now),
    amount: { atomic: record.amount.toString(), usd: formatUsd(record.amount), asset: record.asset },
    network: record.network,
    payTo: record.payTo,
    service: record.service,
    ...(record.txHash ? { transaction: record.txHash } : {}),
    ...(record.payer ? { payer: record.payer } : {}),
    ...(reason ? { reason } : {}),
    createdAt: record.createdAt.toISOString(),
    updatedAt: record.updatedAt.toISOString(),
    ...(record.settledAt ? { settledAt: record.settledAt.toISOString() } : {}),
    ...(record.status === "awaiting_approval" && record.expiresAt
      ? { expiresAt: record.expiresAt.toISOString() }
      : {}),
  };
}

const SAME_STATUS = new Set<string>(["awaiting_approval", "rejected", "expired", "failed", "refused"]);

/**
 * A payment read back from its row, as `pay_and_fetch` answers (a quote id paid before): what
 * happened to the money, without the service's answer (which is not kept). A payment still under
 * way, or unclear, is `unknown`: read it again by its id.
 */
export function recordOutput(record: PaymentRecord, now: Date): PayOutput {
  // Past its window a payment awaiting approval is expired (never asked again), before the
  // reconciler writes so.
  const current = statusAt(record.status, record.expiresAt, now);
  const status: PayOutput["status"] =
    current === "settled" ? "paid" : SAME_STATUS.has(current) ? (current as PayOutput["status"]) : "unknown";
  const reason = reasonOf(record);
  return {
    status,
    paymentId: record.paymentId,
    amountUsd: formatUsd(record.amount),
    network: record.network,
    service: record.service,
    ...(record.txHash ? { transaction: record.txHash } : {}),
    ...(record.payer ? { payer: record.payer } : {}),
    ...(status === "awaiting_approval" && record.expiresAt
      ? { approvalExpiresAt: record.expiresAt.toISOString() }
      : {}),
    ...(reason
      ? {
          error: {
            code: Object.hasOwn(REASONS, reason) ? codeOf(reason as Reason) : "payment_failed",
            reason,
            message: "The payment failed; nothing was paid.",
          },
        }
      : {}),
  };
}

/** Every discovery source failed or found nothing while one failed: the first failing one, named. */
export function directoryUnavailable(errors: string[]): AppError {
  const source = /^https?:\/\/[^\s/]+/.exec(errors[0] ?? "")?.[0] ?? "discovery";
  return new AppError("service_unavailable", DIRECTORY_DOWN, { details: { service: source } });
}
