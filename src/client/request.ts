import type { ChatMessage } from "../protocol/message.js";

/**
 * What a turn sends (`POST /api/chat`'s body, docs/protocol.md), field for field, and the body that
 * resumes a turn that stopped for the wallet's approval.
 */

/** One message of the conversation, as the service takes it: the protocol's own type. */
export type { ChatMessage };

/** Decimal USD as a string ("0.50") or a number (0.5). */
export type Usd = string | number;

/** The request's spending limits (docs/protocol.md, `spendingLimits`); they only tighten the server's. */
export interface SpendingLimits {
  perTransaction?: Usd;
  perRequest?: Usd;
  daily?: Usd;
  /** Payments above this ask the user's wallet to approve, even when a server-held key could pay. */
  approvalAbove?: Usd;
  allowedNetworks?: string[];
  allowedServices?: string[];
}

/** The wallet's answer to a payment awaiting approval (see `./approval.ts` for helpers that make one). */
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
  model?: "aimodel-2.0-flash-exp" | "aimodel-1.5-pro" | "aimodel-1.5-flash";
  temperature?: number;
  maxTokens?: number;
}

/**
 * The body that resumes a turn that stopped for approval: the conversation, the assistant's words
 * of that turn (when it said any), and the wallet's answer; wallet and limits as before.
 */
export function resumeBody(
  request: ChatRequestBody,
  assistantText: string,
  answer: ApprovalAnswer,
): ChatRequestBody {
  const { approval: _previous, ...rest } = request;
  return { ...rest, messages: withAssistantText(request.messages, assistantText), approval: answer };
}

/**
 * The conversation with the assistant's words of a turn added: to the assistant's last message
 * when the conversation ends with one (a turn resumed after an approval goes on in the same
 * message), else as a new message. Empty words add nothing.
 */
export function withAssistantText(messages: ChatMessage[], text: string): ChatMessage[] {
  if (text.trim() === "") return messages;
  const last = messages.at(-1);
  if (last?.role === "assistant") {
    const gap = /\s$/.test(last.content) || /^\s/.test(text) ? "" : "\n\n";
    return [...messages.slice(0, -1), { role: "assistant", content: last.content + gap + text }];
  }
  return [...messages, { role: "assistant", content: text }];
}
