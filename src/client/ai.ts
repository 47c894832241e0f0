/**
 * `@x402-chat-agent/client/ai`: what needs the AI SDK (`ai` 7, types only): the `ChatTransport` for
 * `useChat` with its payment tool-approval parts (docs/clients.md#usechat). The root
 * entry (src/client/index.ts) has everything else and names no `ai` type.
 */

export { openPaymentParts, type PaymentToolPart, PaymentToolParts } from "./tool-parts.js";
export {
  approvalBody,
  eventsToChunks,
  PaymentChatTransport,
  type PaymentChatTransportOptions,
  type PaymentDataTypes,
  type PaymentUIMessage,
  paymentChatSchemas,
  type TurnFields,
  toServiceMessages,
} from "./transport.js";
export { TransportTab, type TransportTabOption, type TransportTabState } from "./transport-tab.js";
