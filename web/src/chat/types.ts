import type { UIMessage } from "ai";
import type {
  ApprovalRequest,
  BudgetMeter,
  ErrorPayload,
  FinishPayload,
  LimitMeter,
  PaymentUpdate,
} from "../../../src/protocol/stream.js";

export type { ApprovalRequest, BudgetMeter, ErrorPayload, FinishPayload, LimitMeter, PaymentUpdate };

/** The data parts the page draws: one `payment` part per payment id (updated in place), one per `e:` line. */
export type ChatDataParts = {
  payment: PaymentUpdate;
  error: ErrorPayload;
};

/** A chat message as `useChat` holds it; the assistant's metadata is the turn's `d:` payload. */
export type ChatMessage = UIMessage<FinishPayload | undefined, ChatDataParts>;

export type { ApprovalAnswer, TurnFields } from "../../../src/client/index.js";
