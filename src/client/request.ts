import type { ChatMessage } from "../protocol/message.js";
import type { ApprovalAnswer, ChatRequestBody } from "../protocol/request-body.js";

export type { SpendingLimits, Usd } from "../protocol/request-body.js";
/**
 * What a turn sends (`POST /api/chat`'s body, docs/protocol.md), field for field, and the body that
 * resumes a turn that stopped for the wallet's approval. The types are the protocol's own
 * (src/protocol/request-body.ts), the very ones the service validates against.
 */
export type { ApprovalAnswer, ChatMessage, ChatRequestBody };

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
