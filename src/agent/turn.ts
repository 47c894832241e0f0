import type { LanguageModelV4 } from "@ai-sdk/provider";
import type { ModelMessage, StopCondition, TelemetryOptions, TextStreamPart, ToolSet } from "ai";
import { isStepCount, streamText } from "ai";
import { AppError, isAppError } from "../errors/index.js";
import type { Payer } from "../payments/face.js";
import type { ChatRequest, FinishPayload, ModelAlias, StreamEvent } from "../protocol/index.js";
import { boundedForTurn } from "./bounds.js";
import type { ToolProvider, TurnContext, TurnPrelude } from "./context.js";
import { CutoffReader, untilCutoff } from "./cutoff.js";
import { type GuardedTools, guardTools } from "./guard.js";
import { exchangeMessages, toModelMessages } from "./messages.js";
import { describeModelError } from "./model-error.js";
import { TurnRecord } from "./record.js";
import { SYSTEM_PROMPT } from "./system-prompt.js";

/** What the agent needs from the models capability. */
export interface ModelResolver {
  resolve(alias: ModelAlias): { model: LanguageModelV4; provider: string; modelId: string };
}

export interface AgentDeps {
  models: ModelResolver;
  /** Builds the tools for a turn; without it the agent only talks. */
  tools?: ToolProvider;
  maxSteps: number;
  /** A tool failed unexpectedly (it threw): the operator's concern. */
  onToolError?: (toolName: string, error: unknown) => void;
  /**
   * The model called a tool wrongly (its input failed the tool's schema, or no such tool): the
   * model's mistake, answered to the model; `message` is the SDK's, which quotes the whole input.
   */
  onMalformedToolCall?: (toolName: string, message: string) => void;
  /** The AI SDK's telemetry for each turn (steps, model calls, tools as spans); absent: none. */
  telemetry?: TelemetryOptions;
}

export interface TurnInput {
  request: ChatRequest;
  /** Who pays within what (built once at the edge); its `scopeId` is the turn's request id. */
  payer: Payer;
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

const ignore = () => {};

/** One stop condition per step budget, shared by every turn (the deps do not change). */
const stopConditions = new Map<number, StopCondition<ToolSet>>();
function stopAfter(steps: number): StopCondition<ToolSet> {
  let condition = stopConditions.get(steps);
  if (!condition) {
    condition = isStepCount(steps);
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
  const record = new TurnRecord(emit);
  const stream = new CutoffReader(input.cutoff);
  let guarded: GuardedTools | undefined;
  try {
    if (input.signal.aborted && !input.prelude) throw input.signal.reason;
    // Built only when there are tools to hand it to (none when payments are off).
    const ctx = deps.tools || input.prelude ? turnContext(input, record) : undefined;
    if (deps.tools && ctx) {
      guarded = guardTools(deps.tools(ctx), ctx, deps.onToolError ? { onToolError: deps.onToolError } : {});
    }
    let messages = toModelMessages(request);
    if (input.prelude && ctx) {
      messages = [...messages, ...(await runPrelude(input.prelude, ctx, input, stream, deps.onToolError))];
    }
    if (stream.isCut) throw input.cutoff?.reason;
    stream.read(modelStream(deps, input, resolved.model, messages, guarded?.tools).stream);
    for (let part = await stream.next(); part; part = await stream.next()) {
      readPart(part, record, deps, input.signal);
    }
  } catch (error) {
    if (!input.signal.aborted) record.reportError(describeModelError(error));
  } finally {
    stream.dispose();
  }
  const unwritten = await recordsWritten(record, input.cutoff);

  if (input.signal.aborted || input.cutoff?.aborted) {
    const reason = abortError(input);
    if (reason && record.failure !== reason) record.reportError(reason);
  }

  const background = [...(guarded?.inFlight() ?? []), ...unwritten];
  if (background.length > 0) input.onBackground?.(Promise.allSettled(background));
  return record.finish({ model: request.model, provider: resolved.provider, modelId: resolved.modelId });
}

/**
 * Wait for the payments' ledger writes that ran beside their answers (a settlement's record), so
 * `d:` never says less than the ledger holds; a write may hold another (none do today), hence the
 * loop. Cut off, the turn stops waiting: returns the writes left running, for the background.
 */
async function recordsWritten(
  record: TurnRecord,
  cutoff: AbortSignal | undefined,
): Promise<Promise<unknown>[]> {
  for (let held = record.takeHeld(); held.length > 0; held = record.takeHeld()) {
    const all = Promise.allSettled(held);
    if (!(await untilCutoff(all, cutoff))) return [all];
  }
  return [];
}

/** What the turn's tools know of it; their payments and errors go to the turn's record. */
function turnContext(input: TurnInput, record: TurnRecord): TurnContext {
  return {
    payer: input.payer,
    signal: input.signal,
    deadline: input.deadline,
    now: input.now ?? Date.now,
    emitPayment: record.emitPayment,
    recordPayment: record.recordPayment,
    reportError: record.reportError,
    holdPayment: record.holdPayment,
  };
}

/**
 * An approved payment runs first, even for a client that already left (it is paid for); the
 * cutoff still ends the stream at once, leaving it to finish in the background. Returns the
 * messages the model continues from (none when it was cut off).
 */
async function runPrelude(
  prelude: TurnPrelude,
  ctx: TurnContext,
  input: TurnInput,
  stream: CutoffReader,
  onError?: AgentDeps["onToolError"],
): Promise<ModelMessage[]> {
  // Not the model's failure: said as the step's, logged, and never "try again" (it may have paid).
  const work = prelude(ctx).catch((error: unknown) => {
    if (isAppError(error) || (input.signal.aborted && error === input.signal.reason)) throw error;
    try {
      onError?.("approved payment", error);
    } catch {
      // A failing log must not hide the step's failure.
    }
    throw new AppError(
      "internal",
      "The approved payment's step failed on an internal error. Do not pay again: the payment history shows what was paid.",
      { cause: error },
    );
  });
  const exchange = await untilCutoff(work, input.cutoff);
  let messages: ModelMessage[] = [];
  if (!exchange) {
    input.onBackground?.(work);
    stream.cut();
  } else {
    messages = exchangeMessages(exchange, input.payer.scopeId);
  }
  if (input.signal.aborted) throw input.signal.reason;
  return messages;
}

/** The model's loop over this turn's messages and tools, as a stream of parts. */
function modelStream(
  deps: AgentDeps,
  input: TurnInput,
  model: LanguageModelV4,
  messages: ModelMessage[],
  tools: ToolSet | undefined,
) {
  const { request } = input;
  return streamText({
    model: boundedForTurn(model),
    instructions: SYSTEM_PROMPT,
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
    ...(deps.telemetry ? { telemetry: deps.telemetry } : {}),
  });
}

/** One part of the model's stream: text goes out, usage and errors go to the record. */
function readPart(
  part: TextStreamPart<ToolSet>,
  record: TurnRecord,
  deps: AgentDeps,
  signal: AbortSignal,
): void {
  switch (part.type) {
    case "text-delta":
      if (part.text) record.send({ type: "text", text: part.text });
      break;
    case "tool-error":
      // Only the SDK's own failures get here (a malformed call); tools that throw are guarded.
      deps.onMalformedToolCall?.(part.toolName, String(part.error));
      break;
    case "finish": {
      const { usage } = record;
      usage.inputTokens = part.totalUsage.inputTokens ?? 0;
      usage.outputTokens = part.totalUsage.outputTokens ?? 0;
      usage.totalTokens = part.totalUsage.totalTokens ?? usage.inputTokens + usage.outputTokens;
      break;
    }
    case "error":
      if (!signal.aborted) record.reportError(describeModelError(part.error));
      break;
    default:
      break;
  }
}

/** Why the turn was aborted, when the reason is one the client should hear. */
function abortError(input: TurnInput): AppError | undefined {
  for (const reason of [input.cutoff?.reason, input.signal.reason]) {
    if (isAppError(reason)) return reason;
  }
  return undefined;
}
