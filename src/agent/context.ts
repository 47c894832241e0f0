import type { ToolSet } from "ai";
import type { AppError } from "../errors/index.js";
import type { Payer } from "../payments/face.js";
import type { PaymentSummary, PaymentUpdate } from "../protocol/index.js";

/**
 * What a tool knows about the chat turn it runs in. Tools are built per turn, so nothing about one
 * request leaks into another.
 */
export interface TurnContext {
  /** Who pays within what, as the edge built it; `payer.scopeId` is the turn's request id. */
  payer: Payer;
  /** Aborted on client disconnect, deadline or shutdown. Work that is already paying finishes regardless. */
  signal: AbortSignal;
  /** Epoch ms by which the whole turn must end. */
  deadline: number;
  now(): number;
  /** Stream a `p:` payment update. */
  emitPayment(update: PaymentUpdate): void;
  /** Record the outcome of a payment for the `d:` line (and the finish reason). */
  recordPayment(summary: PaymentSummary): void;
  /** Report a failure that should end the turn with its finish reason (an `e:` line is streamed). */
  reportError(error: AppError): void;
  /**
   * A payment's last ledger write, finishing beside its answer: the turn waits for it before `d:`
   * (or, cut off, leaves it to the background). Without it a payment awaits the write itself.
   */
  holdPayment?(work: Promise<unknown>): void;
}

/** Builds the tools for one turn. The payments capability provides one; with none the agent only talks. */
export type ToolProvider = (ctx: TurnContext) => ToolSet;

/**
 * A tool call made on the client's behalf before the model runs (a payment the user approved in
 * the wallet): the model sees it as its own call and continues from the result.
 */
export interface ToolExchange {
  toolName: string;
  input: Record<string, unknown>;
  output: unknown;
}

/** Runs the exchange within the turn (its updates stream like a tool's). */
export type TurnPrelude = (ctx: TurnContext) => Promise<ToolExchange>;
