/**
 * A payment as the AI SDK's tool part sees it, with no AI SDK type: the tool's name, its input and
 * output, and the descriptor of an approval in words (src/client/tool-parts.ts turns `p:` updates into
 * the chunks; docs/clients.md#approvals-as-ai-sdk-tool-approval-parts). No import of `ai`, so the
 * package's root entry needs none.
 */
import { utcClock } from "../protocol/clock.js";
import { networkLabel } from "../protocol/networks.js";
import type { ApprovalRequest, LimitMeter, PaymentStatus, PaymentUpdate } from "../protocol/stream.js";
import { describeApproval } from "./approval.js";
/** The tool whose calls are payments (part type `tool-x402_payment`). */
export const PAYMENT_TOOL = "x402_payment";

/** The tool call's input: the payment as quoted. */
export interface PaymentToolInput {
  paymentId: string;
  service: { url: string; name?: string | undefined };
  amount?: { atomic: string; usd: string; asset?: string | undefined } | undefined;
  network?: string | undefined;
  payTo?: string | undefined;
}

/** The tool call's output once the payment settled. */
export interface PaymentToolOutput {
  paymentId: string;
  status: PaymentStatus;
  transaction?: string | undefined;
  payer?: string | undefined;
  network?: string | undefined;
  amount?: { atomic: string; usd: string } | undefined;
}

/** The tools of {@link PaymentUIMessage}: one, the payment. */
export type PaymentTools = { [PAYMENT_TOOL]: { input: PaymentToolInput; output: PaymentToolOutput } };

/** `part.approval.descriptor` of a payment's tool part: what the wallet would sign, in words. */
export interface PaymentApprovalDescriptor {
  kind: "x402-payment";
  /** One sentence: "Pay $0.01 in USD Coin to 0x15d3… for Weather (http://…) on Base, before …". */
  summary: string;
  paymentId: string;
  /** The amount in USD and in the token's atomic units; `token` is the EIP-712 domain's name on EVM. */
  amount: { usd: string; atomic: string; token: string };
  /** The payee's full address. */
  payee: string;
  service: { url: string; name: string };
  /** The CAIP-2 id and its name for people. */
  network: { id: string; name: string };
  /** The wallet that signs and pays. */
  wallet: string;
  /** ISO-8601: after this the approval can no longer be used. */
  expiresAt: string;
  /** USD each budget keeps after this payment (absent where the update carried no meter). */
  budgetAfter: { perRequest?: string; daily?: string };
  /** How the wallet is asked: `eth_signTypedData_v4` or `signTransaction`. */
  method: string;
  /** Where the EVM typed data disagrees with the quote: never sign when it is not empty. */
  mismatches: string[];
  /**
   * Why the last answer was refused, when the part asks again: the payment still waits and can be
   * approved again (a signature the service refused, the service or the chain unreachable...).
   */
  refusal?: string;
}

/** A CAIP-2 network's name for people (the id itself when it is not a known one; src/protocol/networks.ts). */
export function networkName(network: string): string {
  return networkLabel(network);
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}

/** An update that awaits the wallet, with its request. */
export type AwaitingUpdate = PaymentUpdate & { approval: ApprovalRequest };

export function isAwaiting(update: PaymentUpdate): update is AwaitingUpdate {
  return update.status === "awaiting_approval" && update.approval !== undefined;
}

/** The readable descriptor of a payment awaiting approval. */
export function describePaymentApproval(update: AwaitingUpdate): PaymentApprovalDescriptor {
  const summary = describeApproval(update);
  const sign = update.approval.sign;
  const domainName = sign.kind === "evm-typed-data" ? sign.typedData.domain.name : undefined;
  const token = typeof domainName === "string" && domainName !== "" ? domainName : "USDC";
  const usd = update.amount?.usd ?? "?";
  const network = update.network ?? "";
  const service = { url: update.service.url, name: update.service.name ?? hostOf(update.service.url) };
  const budgetAfter: PaymentApprovalDescriptor["budgetAfter"] = {};
  const perRequest = update.budget?.perRequest.remainingAfter?.usd;
  const daily = update.budget?.daily.remainingAfter?.usd;
  if (perRequest !== undefined) budgetAfter.perRequest = perRequest;
  if (daily !== undefined) budgetAfter.daily = daily;
  const payee = update.payTo ?? "";
  return {
    kind: "x402-payment",
    summary:
      `Pay $${usd} in ${token} to ${payee} for ${service.name} (${service.url}) on ${networkName(network)}, ` +
      `from ${update.approval.wallet}, before ${utcClock(update.approval.expiresAt)}.`,
    paymentId: update.paymentId,
    amount: { usd, atomic: update.amount?.atomic ?? "", token },
    payee,
    service,
    network: { id: network, name: networkName(network) },
    wallet: update.approval.wallet,
    expiresAt: update.approval.expiresAt,
    budgetAfter,
    method: sign.method,
    mismatches: summary.mismatches,
  };
}

export function inputOf(update: PaymentUpdate): PaymentToolInput {
  return {
    paymentId: update.paymentId,
    service: { url: update.service.url, ...(update.service.name ? { name: update.service.name } : {}) },
    ...(update.amount ? { amount: update.amount } : {}),
    ...(update.network ? { network: update.network } : {}),
    ...(update.payTo ? { payTo: update.payTo } : {}),
  };
}

export function outputOf(update: PaymentUpdate): PaymentToolOutput {
  return {
    paymentId: update.paymentId,
    status: update.status,
    ...(update.transaction ? { transaction: update.transaction } : {}),
    ...(update.payer ? { payer: update.payer } : {}),
    ...(update.network ? { network: update.network } : {}),
    ...(update.amount ? { amount: { atomic: update.amount.atomic, usd: update.amount.usd } } : {}),
  };
}

/** What a budget leaves, in words: "$0.32 of $1.00 left today". */
function leftOf(meter: LimitMeter | undefined, when: string): string | undefined {
  if (!meter) return undefined;
  return `$${(meter.remainingAfter ?? meter.remaining).usd} of $${meter.limit.usd} left ${when}`;
}

/**
 * Why a payment was paid without asking the wallet, in words from its `p:` update: within the
 * per-payment limit, and what each budget keeps after it ("$0.01 is within your $0.10 limit per
 * payment; $0.09 of $0.10 left for this request; $0.32 of $1.00 left today").
 */
export function automaticApprovalReason(update: PaymentUpdate): string {
  // From a tab the wallet funded once: it is the budget that approved it.
  if (update.tab) return `Paid from your tab: $${update.tab.left.usd} left of $${update.tab.amount.usd}`;
  const budget = update.budget;
  const usd = update.amount?.usd ?? "?";
  const within = budget
    ? `$${usd} is within your $${budget.perTransaction.limit.usd} limit per payment`
    : `$${usd} is within your spending limits`;
  const left = [leftOf(budget?.perRequest, "for this request"), leftOf(budget?.daily, "today")];
  return [
    budget?.approvalAbove
      ? `Approved automatically: ${within}, under your $${budget.approvalAbove.usd} threshold for the wallet`
      : `Approved automatically: ${within}, below the amount that asks your wallet`,
    ...left.filter((s) => s !== undefined),
  ].join("; ");
}

/** Why a payment was refused: its code and words ("limit_exceeded: the daily limit ..."). */
export function refusalReason(update: PaymentUpdate): string {
  const code = update.reason ?? "refused";
  return update.message ? `${code}: ${update.message}` : code;
}
