import type { PaymentUIMessage } from "../../../src/client/ai.js";

export type { TurnFields } from "../../../src/client/ai.js";
export type { ApprovalAnswer } from "../../../src/client/index.js";
export type {
  ApprovalRequest,
  BudgetMeter,
  ErrorPayload,
  FinishPayload,
  LimitMeter,
  PaymentUpdate,
} from "../../../src/protocol/stream.js";

/**
 * A chat message as `useChat` holds it with the SDK's transport: text, one `data-payment` part per
 * payment id (updated in place), a `data-error` part per `e:` line, and the `d:` payload as metadata.
 * (Not the SDK's `ChatMessage`, the `{ role, content }` the service takes.)
 */
export type { PaymentUIMessage };
