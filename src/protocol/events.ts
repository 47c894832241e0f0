import type { FinishReason } from "../errors/index.js";

/**
 * The payloads of the chat stream's lines (docs/protocol.md, "Response stream") as TypeScript
 * types. Their validators are in schemas.ts, which checks at compile time that each schema's output
 * is exactly the type here; the encoder and decoder are in stream.ts. This file imports no
 * validator, so the client package's declarations need none (packages/client, docs/clients.md).
 * Objects may carry fields added later: each has an index signature of unknown values.
 */

/** The states a payment goes through (docs/payments.md has the transitions). */
export const PAYMENT_STATUSES = [
  "quoted",
  "refused",
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
] as const;
export type PaymentStatus = (typeof PAYMENT_STATUSES)[number];

/** An amount both ways: atomic units as a decimal string, and plain USD ("0.01"). */
export interface Money {
  atomic: string;
  usd: string;
}

/**
 * One spending limit as it stands: its amount, what counts as spent (settled, or unclear and
 * possibly gone), what is pending (reserved, signed, submitted), what remains, and, while a payment
 * is quoted or awaits approval, what would remain after paying it. `remaining` never goes below 0.
 */
export interface LimitMeter {
  [key: string]: unknown;
  limit: Money;
  spent: Money;
  pending: Money;
  remaining: Money;
  remainingAfter?: Money;
}

/** The live budget meter every `p:` update carries from the quote on: draw it as it is. */
export interface BudgetMeter {
  [key: string]: unknown;
  perTransaction: LimitMeter;
  perRequest: LimitMeter;
  daily: LimitMeter;
  /** Above this amount the user's wallet approves even where a server key could sign (absent: none set). */
  approvalAbove?: Money;
  /**
   * The open tab the request names (docs/payments.md#tabs), and what it holds, whether or not this
   * payment is paid from it; absent when the request names none (or a server key pays).
   */
  tab?: TabMeter;
}

/** The EIP-712 typed data of an EIP-3009 `TransferWithAuthorization`, as `eth_signTypedData_v4` takes it. */
export interface EvmTypedData {
  [key: string]: unknown;
  domain: Record<string, unknown>;
  types: Record<string, { name: string; type: string }[]>;
  primaryType: string;
  message: Record<string, unknown>;
}

/**
 * What the user's wallet must sign to approve a payment (docs/protocol.md, "Approval"): for EVM the
 * EIP-712 typed data of an EIP-3009 `TransferWithAuthorization` exactly as `eth_signTypedData_v4`
 * takes it (uint256 values as decimal strings); for Solana the transaction, base64, for a Wallet
 * Standard `signTransaction` (the facilitator is its fee payer and signs last).
 */
export type WalletRequest =
  | {
      [key: string]: unknown;
      kind: "evm-typed-data";
      method: "eth_signTypedData_v4";
      typedData: EvmTypedData;
    }
  | {
      [key: string]: unknown;
      kind: "solana-transaction";
      method: "signTransaction";
      /** The wire transaction, base64, with empty signature slots. */
      transaction: string;
    };

export interface ApprovalRequest {
  [key: string]: unknown;
  /** The wallet that must sign (the request's `walletAddress`). */
  wallet: string;
  /** ISO-8601: after this the signature can no longer be used (the authorization's window, or the Solana blockhash's life). */
  expiresAt: string;
  /** How to resume: send `approval` with this payment id in the next `POST /api/chat`. */
  sign: WalletRequest;
}

export interface PaymentAmount {
  /** Atomic units of the token, as a decimal string (bigint on the server). */
  atomic: string;
  /** The same amount in USD, plain decimal string ("0.01"). */
  usd: string;
  asset?: string;
}

/** A `p:` line: one payment's new state. */
export interface PaymentUpdate {
  [key: string]: unknown;
  paymentId: string;
  status: PaymentStatus;
  service: { [key: string]: unknown; url: string; name?: string };
  amount?: PaymentAmount;
  network?: string;
  payTo?: string;
  transaction?: string;
  payer?: string;
  message?: string;
  reason?: string;
  /** The budget as it stands, on every update from the quote on. */
  budget?: BudgetMeter;
  /** Only with status `awaiting_approval`: what the wallet signs, and until when. */
  approval?: ApprovalRequest;
  /** A payment from a tab (docs/payments.md#tabs): which, and what it holds. */
  tab?: TabMeter;
}

/** A tab as a payment's update shows it: `left` is what it holds beside its committed payments. */
export interface TabMeter {
  [key: string]: unknown;
  id: string;
  amount: Money;
  left: Money;
  /** When the tab ends (ISO-8601). */
  endsAt: string;
}

/** An `e:` line. */
export interface ErrorPayload {
  [key: string]: unknown;
  code: string;
  message: string;
}

/** One payment of a turn, in its `d:` line. */
export interface PaymentSummary {
  [key: string]: unknown;
  paymentId: string;
  status: PaymentStatus;
  service: string;
  amountUsd?: string;
  network?: string;
  transaction?: string;
}

/** The `d:` line, exactly once, last. */
export interface FinishPayload {
  [key: string]: unknown;
  finishReason: FinishReason;
  /** The last settled payment's transaction, when the turn paid anything. */
  transactionHash?: string;
  transactions: string[];
  payments: PaymentSummary[];
  usage: { inputTokens: number; outputTokens: number; totalTokens: number };
  /** The public model alias the client asked for. */
  model: string;
  /** Which provider actually served the turn ("offline", "google", "openai-compatible"). */
  provider: string;
  /** The provider's own model id. */
  modelId: string;
  /** With finish reason `approval-required`: the payments waiting for the user's wallet, oldest first. */
  approvals?: { [key: string]: unknown; paymentId: string; expiresAt: string }[];
  /** The code of the `e:` line the turn ends with, when one stands (a refusal made good does not). */
  errorCode?: string;
}

export type StreamEvent =
  | { type: "text"; text: string }
  | { type: "payment"; payment: PaymentUpdate }
  | { type: "error"; error: ErrorPayload }
  | { type: "finish"; finish: FinishPayload };
