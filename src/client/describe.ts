import type { ApprovalRequest, PaymentUpdate } from "../protocol/stream.js";
import { checkEvmApproval } from "./evm-payment.js";

/** What a person is shown of a payment awaiting approval, and where its data disagrees with it. */

export function isUpdate(source: PaymentUpdate | ApprovalRequest): source is PaymentUpdate {
  return typeof source.paymentId === "string" && typeof source.status === "string";
}

/** An update's approval request, or a clear error when it has none. */
export function requestOf(source: PaymentUpdate | ApprovalRequest): ApprovalRequest {
  const approval = isUpdate(source) ? source.approval : source;
  if (!approval) throw new TypeError("this payment update carries no approval request");
  return approval;
}

/** What an approval asks, in words a person can check before signing. */
export interface ApprovalSummary {
  paymentId: string;
  wallet: string;
  chain: "evm" | "solana";
  /** How the wallet is asked: `eth_signTypedData_v4` or `signTransaction`. */
  method: string;
  expiresAt: string;
  amountUsd: string | undefined;
  amountAtomic: string | undefined;
  payTo: string | undefined;
  network: string | undefined;
  service: string;
  /**
   * Where the signed data and the update disagree (EVM: the authorization's `to`, `value` or
   * `from`). Empty when they agree; a client should refuse to sign otherwise.
   */
  mismatches: string[];
}

/** A plain decimal USD amount ("0.05", "500") in USDC's atomic units (six decimals), or undefined. */
export function usdcAtomic(usd: string): bigint | undefined {
  const parts = /^(\d{1,15})(?:\.(\d{1,6}))?$/.exec(usd.trim());
  return parts ? BigInt(parts[1] ?? "0") * 1_000_000n + BigInt((parts[2] ?? "").padEnd(6, "0")) : undefined;
}

/**
 * Where the dollars shown are not the atomic amount signed (USDC: six decimals): the person reads
 * `usd`, the wallet moves `atomic`, and a service that lies in one of them must not get a signature.
 */
function shownAmountMismatch(update: PaymentUpdate): string[] {
  const amount = update.amount;
  if (!amount) return [];
  const atomic = usdcAtomic(amount.usd);
  if (atomic !== undefined && String(atomic) === amount.atomic) return [];
  return [
    `shows $${amount.usd.slice(0, 20)}, but the amount signed is ${amount.atomic} atomic units (6 decimals)`,
  ];
}

/**
 * Describe an update awaiting approval. EVM typed data is checked against the update: a USDC
 * transfer authorization, on the update's network, of that network's USDC where it is known, of
 * its amount to its payee, valid no longer than the approval's window. A Solana transaction is
 * checked before it is signed ({@link checkSolanaApproval}: decoding it needs `@solana/kit`,
 * loaded on demand).
 */
export function describeApproval(update: PaymentUpdate): ApprovalSummary {
  const approval = requestOf(update);
  const mismatches = [
    ...shownAmountMismatch(update),
    ...(approval.sign.kind === "evm-typed-data" ? checkEvmApproval(update, approval, approval.sign) : []),
  ];
  return {
    paymentId: update.paymentId,
    wallet: approval.wallet,
    chain: approval.sign.kind === "evm-typed-data" ? "evm" : "solana",
    method: approval.sign.method,
    expiresAt: approval.expiresAt,
    amountUsd: update.amount?.usd,
    amountAtomic: update.amount?.atomic,
    payTo: update.payTo,
    network: update.network,
    service: update.service.name ?? update.service.url,
    mismatches,
  };
}
