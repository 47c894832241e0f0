import type { LanguageModelV3 } from "@ai-sdk/provider";
import {
  APICallError,
  type ModelMessage,
  type StopCondition,
  stepCountIs,
  streamText,
  type TextStreamPart,
  type ToolSet,
} from "ai";
import { AppError, type FinishReason, isAppError } from "../errors/index.js";
import type {
  ChatRequest,
  FinishPayload,
  ModelAlias,
  PaymentSummary,
  PaymentUpdate,
  StreamEvent,
} from "../protocol/index.js";
import { PAYMENT_STATUS } from "../protocol/index.js";
import { APPROVAL_CALL_PREFIX } from "../tools/contract.js";
import type { ToolExchange, ToolProvider, TurnContext, TurnPrelude } from "./context.js";
import { type GuardedTools, guardTools } from "./guard.js";
import { frameClientSystemMessage, SYSTEM_PROMPT } from "./system-prompt.js";

/** What the agent needs from the models capability. */
export interface ModelResolver {
  resolve(alias: ModelAlias): { model: LanguageModelV3; provider: string; modelId: string };
}

export interface AgentDeps {
  models: ModelResolver;
  /** Builds the tools for a turn; without it the agent only talks. */
  tools?: ToolProvider;
  maxSteps: number;
  onToolError?: (toolName: string, error: unknown) => void;
}

export interface TurnInput {
  request: ChatRequest;
  requestId: string;
  idempotencyKey?: string;
  bearerToken?: string;
  /** The caller's identity when authenticated (approvals are bound to it). */
  caller?: string;
  /** Runs before the model (an approved payment); the model continues from its result. */
  prelude?: TurnPrelude;
  /** Aborted on client disconnect, deadline or shutdown; an AppError reason is reported to the client. */
  signal: AbortSignal;
  /**
   * Aborted (with an AppError reason) when the stream must end now: the deadline or a shutdown.
   * The turn then ends at once, without waiting for tools still running.
   */
  cutoff?: AbortSignal;
  deadline: number;
  now?: () => number;
  /** Receives the tool calls a cut-off turn left running, so a shutdown can wait for them. */
  onBackground?: (work: Promise<unknown>) => void;
}

/** Turn the request's messages into model messages, framing client system messages below ours. */
function toModelMessages(request: ChatRequest): ModelMessage[] {
  return request.messages.map((m): ModelMessage => {
    if (m.role === "system") return { role: "system", content: frameClientSystemMessage(m.content) };
    return { role: m.role, content: m.content };
  });
}

/** The exchange as the model's own earlier step: its tool call, then the tool's result. */
function exchangeMessages(exchange: ToolExchange, id: string): ModelMessage[] {
  const toolCallId = `${APPROVAL_CALL_PREFIX}${id}`;
  return [
    {
      role: "assistant",
      content: [{ type: "tool-call", toolCallId, toolName: exchange.toolName, input: exchange.input }],
    },
    {
      role: "tool",
      content: [
        {
          type: "tool-result",
          toolCallId,
          toolName: exchange.toolName,
          output: { type: "json", value: exchange.output as never },
        },
      ],
    },
  ];
}

function describeModelError(error: unknown): AppError {
  if (isAppError(error)) return error;
  if (APICallError.isInstance(error)) {
    const status = error.statusCode ? ` with HTTP ${error.statusCode}` : "";
    return new AppError(
      "model_error",
      `The model provider failed${status}. Try again or choose another model.`,
      {
        details: error.statusCode ? { providerStatus: error.statusCode } : {},
      },
    );
  }
  return new AppError("model_error", "The model provider failed. Try again or choose another model.");
}

const ignore = () => {};

/** The work's result, or undefined as soon as `cutoff` aborts first. */
async function untilCutoff<T>(work: Promise<T>, cutoff: AbortSignal | undefined): Promise<T | undefined> {
  if (!cutoff) return work;
  if (cutoff.aborted) return undefined;
  let onAbort = () => {};
  const aborted = new Promise<undefined>((resolve) => {
    onAbort = () => resolve(undefined);
    cutoff.addEventListener("abort", onAbort, { once: true });
  });
  try {
    return await Promise.race([work, aborted]);
  } finally {
    cutoff.removeEventListener("abort", onAbort);
  }
}

/** One stop condition per step budget, shared by every turn (the deps do not change). */
const stopConditions = new Map<number, StopCondition<ToolSet>>();
function stopAfter(steps: number): StopCondition<ToolSet> {
  let condition = stopConditions.get(steps);
  if (!condition) {
    condition = stepCountIs(steps);
    stopConditions.set(steps, condition);
  }
  return condition;
}

/**
 * Run one chat turn: the model loop with tools, streaming every event through `emit`. It never
 * throws; it always ends by emitting exactly one `finish` event, last, and returns it.
 *
 * When `cutoff` aborts (the deadline, a shutdown), the turn ends at once even if a tool is still
 * running (a payment waiting on a slow settlement): the stream gets `e:` then `d:`, listing the
 * payments still in flight with their last known status and `pending: true`. Those tool calls go
 * on in the background (a payment is not tied to the client) and are handed to `onBackground`;
 * nothing they emit afterwards reaches this turn's stream.
 */
export async function runTurn(
  deps: AgentDeps,
  input: TurnInput,
  emit: (event: StreamEvent) => void,
): Promise<FinishPayload> {
  const { request } = input;
  const resolved = deps.models.resolve(request.model);
  const payments = new Map<string, PaymentSummary>();
  /** Last update of every payment streamed in this turn, to name the ones still in flight. */
  const updates = new Map<string, PaymentUpdate>();
  let failure: AppError | undefined;
  const reported = new WeakSet<AppError>();
  const usage = { inputTokens: 0, outputTokens: 0, totalTokens: 0 };
  let ended = false;
  const send = (event: StreamEvent) => {
    if (!ended) emit(event);
  };

  const reportError = (error: AppError) => {
    if (ended || reported.has(error)) return;
    reported.add(error);
    failure = error;
    send({ type: "error", error: { code: error.code, message: error.message, ...error.details } });
  };

  const abortError = (): AppError | undefined => {
    for (const reason of [input.cutoff?.reason, input.signal.reason]) {
      if (isAppError(reason)) return reason;
    }
    return undefined;
  };

  let guarded: GuardedTools | undefined;
  // The cutoff wins over a step that is still waiting (on a tool, or on the model): releasing the
  // reader rejects its pending read at once, and the loop ends.
  let parts: ReadableStream<TextStreamPart<ToolSet>> | undefined;
  let reader: ReadableStreamDefaultReader<TextStreamPart<ToolSet>> | undefined;
  let cut = false;
  const onCutoff = () => {
    cut = true;
    if (!reader) return;
    reader.releaseLock();
    parts?.cancel().catch(() => {});
  };
  if (input.cutoff?.aborted) cut = true;
  else input.cutoff?.addEventListener("abort", onCutoff, { once: true });
  try {
    if (input.signal.aborted && !input.prelude) throw input.signal.reason;
    let ctx: TurnContext | undefined;
    if (deps.tools || input.prelude) {
      // Built only when there are tools to hand it to (none when payments are off).
      ctx = {
        requestId: input.requestId,
        signal: input.signal,
        deadline: input.deadline,
        now: input.now ?? Date.now,
        emitPayment: (update) => {
          if (ended) return;
          updates.set(update.paymentId, update);
          send({ type: "payment", payment: update });
        },
        recordPayment: (summary) => {
          if (!ended) payments.set(summary.paymentId, summary);
        },
        reportError,
        ...(input.idempotencyKey ? { idempotencyKey: input.idempotencyKey } : {}),
        ...(input.bearerToken ? { bearerToken: input.bearerToken } : {}),
        ...(input.caller ? { caller: input.caller } : {}),
        ...(request.wallet ? { wallet: request.wallet } : {}),
        ...(request.spendingLimits ? { spendingLimits: request.spendingLimits } : {}),
      };
      if (deps.tools) {
        guarded = guardTools(deps.tools(ctx), ctx, deps.onToolError ? { onToolError: deps.onToolError } : {});
      }
    }
    let messages = toModelMessages(request);
    if (input.prelude && ctx) {
      // An approved payment runs first, even for a client that already left (it is paid for);
      // the cutoff still ends the stream at once, leaving it to finish in the background.
      const work = input.prelude(ctx);
      const exchange = await untilCutoff(work, input.cutoff);
      if (!exchange) {
        input.onBackground?.(work);
        cut = true;
      } else {
        messages = [...messages, ...exchangeMessages(exchange, input.requestId)];
      }
      if (input.signal.aborted) throw input.signal.reason;
    }
    const tools = guarded?.tools;
    if (cut) throw input.cutoff?.reason;
    const result = streamText({
      model: resolved.model,
      system: SYSTEM_PROMPT,
      messages,
      // Client system messages are deliberate: kept, framed below the built-in prompt, and unable
      // to change any payment rule (those are code).
      allowSystemInMessages: true,
      ...(tools && Object.keys(tools).length > 0 ? { tools } : {}),
      stopWhen: stopAfter(deps.maxSteps),
      maxOutputTokens: request.maxTokens,
      temperature: request.temperature,
      abortSignal: input.signal,
      maxRetries: 1,
      // Errors are read from the stream below; the default handler would print them.
      onError: ignore,
    });
    parts = result.fullStream;
    reader = parts.getReader();
    if (cut) onCutoff();
    for (;;) {
      let next: ReadableStreamReadResult<TextStreamPart<ToolSet>>;
      try {
        next = await reader.read();
      } catch (error) {
        if (cut) break;
        throw error;
      }
      if (next.done) break;
      const part = next.value;
      switch (part.type) {
        case "text-delta":
          if (part.text) send({ type: "text", text: part.text });
          break;
        case "tool-error":
          // Only the SDK's own failures get here (a malformed call); tools that throw are guarded.
          deps.onToolError?.(part.toolName, part.error);
          break;
        case "finish":
          usage.inputTokens = part.totalUsage.inputTokens ?? 0;
          usage.outputTokens = part.totalUsage.outputTokens ?? 0;
          usage.totalTokens = part.totalUsage.totalTokens ?? usage.inputTokens + usage.outputTokens;
          break;
        case "error":
          if (!input.signal.aborted) reportError(describeModelError(part.error));
          break;
        default:
          break;
      }
    }
  } catch (error) {
    if (!input.signal.aborted) reportError(describeModelError(error));
  } finally {
    input.cutoff?.removeEventListener("abort", onCutoff);
  }

  if (input.signal.aborted || input.cutoff?.aborted) {
    const reason = abortError();
    if (reason && failure !== reason) reportError(reason);
  }

  const background = guarded?.inFlight() ?? [];
  if (background.length > 0) input.onBackground?.(Promise.allSettled(background));

  const all = [...payments.values()];
  // Payments streamed but not yet finished (their tool is still running): their last known status.
  for (const update of updates.values()) {
    if (payments.has(update.paymentId) || !PAYMENT_STATUS[update.status].inFlight) continue;
    all.push({
      paymentId: update.paymentId,
      status: update.status,
      service: update.service.url,
      ...(update.amount ? { amountUsd: update.amount.usd } : {}),
      ...(update.network ? { network: update.network } : {}),
      pending: true,
    });
  }
  const transactions = all.flatMap((p) => (p.status === "settled" && p.transaction ? [p.transaction] : []));
  const approvals = all.flatMap((p) =>
    p.status === "awaiting_approval" && typeof p.expiresAt === "string"
      ? [{ paymentId: p.paymentId, expiresAt: p.expiresAt }]
      : [],
  );
  let finishReason: FinishReason = "stop";
  if (failure) finishReason = failure.finishReason;
  else if (approvals.length > 0) finishReason = "approval-required";
  else if (all.some((p) => p.status === "settled")) finishReason = "payment-complete";

  const finish: FinishPayload = {
    finishReason,
    ...(transactions.length > 0 ? { transactionHash: transactions.at(-1) } : {}),
    transactions,
    payments: all,
    usage,
    model: request.model,
    provider: resolved.provider,
    modelId: resolved.modelId,
    ...(approvals.length > 0 ? { approvals } : {}),
  };
  send({ type: "finish", finish });
  ended = true;
  return finish;
}
