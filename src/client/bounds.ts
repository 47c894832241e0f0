import type { ChatMessage } from "./request.js";

/** The service's bounds on a request's messages (docs/protocol.md, REQUEST_BOUNDS). */
export const SERVICE_BOUNDS = { maxMessages: 100, maxChars: 64_000 };

/**
 * The most recent messages within the service's bounds (at most 100 messages, 64,000 characters in
 * all): the oldest dropped first, the last always kept. A long conversation goes on instead of being
 * refused (`messages: must hold at most 100 messages`).
 */
export function recentMessages(
  messages: ReadonlyArray<ChatMessage>,
  bounds: { maxMessages?: number; maxChars?: number } = {},
): ChatMessage[] {
  const maxMessages = bounds.maxMessages ?? SERVICE_BOUNDS.maxMessages;
  const maxChars = bounds.maxChars ?? SERVICE_BOUNDS.maxChars;
  const out = [...messages];
  let total = out.reduce((sum, m) => sum + m.content.length, 0);
  while (out.length > 1 && (out.length > maxMessages || total > maxChars)) {
    total -= out.shift()?.content.length ?? 0;
  }
  return out;
}
