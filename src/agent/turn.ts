import type { LanguageModelV3 } from "@ai-sdk/provider";
import { APICallError, type ModelMessage, stepCountIs, streamText } from "ai";
import { AppError, type FinishReason, isAppError } from "../errors/index.js";
import type {
  ChatRequest,
  FinishPayload,
  ModelAlias,
  PaymentSummary,
  StreamEvent,
} from "../protocol/index.js";
import type { ToolProvider, TurnContext } from "./context.js";
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
  /** Aborted on client disconnect, deadline or shutdown; an AppError reason is reported to the client. */
  signal: AbortSignal;
  deadline: number;
  now?: () => number;
}

/** Turn the request's messages into model messages, framing client system messages below ours. */
function toModelMessages(request: ChatRequest): ModelMessage[] {
  return request.messages.map((m): ModelMessage => {
    if (m.role === "system") return { role: "system", content: frameClientSystemMessage(m.content) };
    return { role: m.role, content: m.content };
  });
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

/**
 * Run one chat turn: the model loop with tools, streaming every event through `emit`. It never
 * throws; it always ends by emitting exactly one `finish` event, last, and returns it.
 */
export async function runTurn(
  deps: AgentDeps,
  input: TurnInput,
  emit: (event: StreamEvent) => void,
): Promise<FinishPayload> {
  const { request } = input;
  const resolved = deps.models.resolve(request.model);
  const payments = new Map<string, PaymentSummary>();
  let failure: AppError | undefined;
  const usage = { inputTokens: 0, outputTokens: 0, totalTokens: 0 };

  const reportError = (error: AppError) => {
    failure = error;
    emit({ type: "error", error: { code: error.code, message: error.message, ...error.details } });
  };

  const ctx: TurnContext = {
    requestId: input.requestId,
    signal: input.signal,
    deadline: input.deadline,
    now: input.now ?? Date.now,
    emitPayment: (update) => emit({ type: "payment", payment: update }),
    recordPayment: (summary) => payments.set(summary.paymentId, summary),
    reportError,
    ...(input.idempotencyKey ? { idempotencyKey: input.idempotencyKey } : {}),
    ...(input.bearerToken ? { bearerToken: input.bearerToken } : {}),
    ...(request.wallet ? { wallet: request.wallet } : {}),
    ...(request.spendingLimits ? { spendingLimits: request.spendingLimits } : {}),
  };

  const abortError = (): AppError | undefined => {
    const reason: unknown = input.signal.reason;
    return isAppError(reason) ? reason : undefined;
  };

  try {
    if (input.signal.aborted) throw input.signal.reason;
    const tools = deps.tools?.(ctx);
    const result = streamText({
      model: resolved.model,
      system: SYSTEM_PROMPT,
      messages: toModelMessages(request),
      // Client system messages are deliberate: kept, framed below the built-in prompt, and unable
      // to change any payment rule (those are code).
      allowSystemInMessages: true,
      ...(tools && Object.keys(tools).length > 0 ? { tools } : {}),
      stopWhen: stepCountIs(deps.maxSteps),
      maxOutputTokens: request.maxTokens,
      temperature: request.temperature,
      abortSignal: input.signal,
      maxRetries: 1,
      onError: () => {
        // Errors are read from the stream below; the default handler would print them.
      },
    });
    for await (const part of result.fullStream) {
      switch (part.type) {
        case "text-delta":
          if (part.text) emit({ type: "text", text: part.text });
          break;
        case "tool-error":
          deps.onToolError?.(part.toolName, part.error);
          break;
        case "finish":
          usage.inputTokens = part.totalUsage.inputTokens ?? 0;
          usage.outputTokens = part.totalUsage.outputTokens ?? 0;
          usage.totalTokens = part.totalUsage.totalTokens ?? usage.inputTokens + usage.outputTokens;
          break;
        case "abort":
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
  }

  if (input.signal.aborted) {
    const reason = abortError();
    if (reason && failure !== reason) reportError(reason);
  }

  const all = [...payments.values()];
  const transactions = all.flatMap((p) => (p.status === "settled" && p.transaction ? [p.transaction] : []));
  let finishReason: FinishReason = "stop";
  if (failure) finishReason = failure.finishReason;
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
  };
  emit({ type: "finish", finish });
  return finish;
}
