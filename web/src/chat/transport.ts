import type { ChatTransport } from "ai";
import { ChatHttpError, PaymentChatTransport, type TurnFields } from "../../../src/client/index.js";
import type { PaymentUIMessage } from "./types.js";

/**
 * The page's `useChat` transport: the SDK's own (`x402-chat-agent/client`, src/client/transport.ts),
 * asked at every request for the page's current settings and token. A 429 is shown, not waited out
 * silently. The page draws its own approval cards from the `data-payment` parts (signing, sending,
 * a refusal shown on the card and approved again): it turns the SDK's tool-approval parts off.
 */
export function createTransport(source: {
  fields: () => TurnFields;
  token: () => string | undefined;
}): ChatTransport<PaymentUIMessage> {
  return new PaymentChatTransport({
    fields: source.fields,
    token: source.token,
    rateLimitRetry: false,
    approvalParts: false,
  });
}

/** An error for people: a refusal's detail and code (and when to retry), or the error's message. */
export function describeError(error: unknown): string {
  if (error instanceof ChatHttpError) {
    const retry = error.retryAfterSeconds !== undefined ? ` Try again in ${error.retryAfterSeconds} s.` : "";
    return `${error.message} (${error.code})${retry}`;
  }
  return error instanceof Error ? error.message : String(error);
}
