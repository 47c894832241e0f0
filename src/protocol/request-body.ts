import type { ChatMessage } from "./message.js";
import type { ModelAlias } from "./models.js";

/**
 * What a client sends (`POST /api/chat`'s body, docs/protocol.md), field for field, as plain types:
 * the client SDK exports these very types. This file imports no validator, so the SDK's declarations
 * need none; request.ts validates a body against them (its schema's input, checked at compile time).
 */

/** Decimal USD as a string ("0.50") or a number (0.5). */
export type Usd = string | number;

/**
 * The request's spending limits (docs/protocol.md, `spendingLimits`): they apply up to the service's
 * caps and the caller's key's caps (LIMITS_RULE, limits-rule.ts).
 */
export interface SpendingLimits {
  perTransaction?: Usd;
  perRequest?: Usd;
  daily?: Usd;
  /** Payments above this ask the user's wallet to approve, even when a server-held key could pay. */
  approvalAbove?: Usd;
  allowedNetworks?: string[];
  allowedServices?: string[];
}

/** The wallet's answer to a payment awaiting approval (the SDK's `approval.ts` has helpers that make one). */
export type ApprovalAnswer =
  | { paymentId: string; signature: `0x${string}` }
  | { paymentId: string; transaction: string }
  | { paymentId: string; reject: true };

/** The request body, field for field as the service takes it (unknown fields are refused there). */
export interface ChatRequestBody {
  messages: ChatMessage[];
  walletAddress?: string;
  spendingLimits?: SpendingLimits;
  approval?: ApprovalAnswer;
  /**
   * A tab's token (`POST /api/tabs` returned it; docs/payments.md#tabs): payments this wallet's
   * wallet would otherwise sign one by one are paid from that tab, within every limit.
   */
  tab?: string;
  model?: ModelAlias;
  temperature?: number;
  maxTokens?: number;
}
