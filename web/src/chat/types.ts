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

/** What the page sends with each request, besides the conversation (docs/protocol.md, "Request"). */
export interface RequestSettings {
  walletAddress?: string;
  spendingLimits?: Record<string, string | string[]>;
  model: string;
  temperature: number;
  maxTokens: number;
  /** A bearer token, for a service that requires one. */
  token?: string;
}

/** The wallet's answer to a payment awaiting approval, as the request's `approval` field. */
export type ApprovalAnswer =
  | { paymentId: string; signature: `0x${string}` }
  | { paymentId: string; transaction: string }
  | { paymentId: string; reject: true };
