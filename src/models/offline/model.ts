import type {
  LanguageModelV4,
  LanguageModelV4CallOptions,
  LanguageModelV4Content,
  LanguageModelV4FinishReason,
  LanguageModelV4GenerateResult,
  LanguageModelV4StreamPart,
  LanguageModelV4StreamResult,
  LanguageModelV4Usage,
} from "@ai-sdk/provider";
import { decideStep, type Step } from "./plan.js";
import { countPromptWords, countWords, readTurn } from "./prompt.js";

export interface OfflineModelOptions {
  /** Words per text-delta (default 3). */
  chunkSize?: number;
  /** Pause between text-deltas in ms (default 0), to make the stream look like a remote model's. */
  delayMs?: number;
}

/** One step, rendered: text split into chunks (truncated to maxOutputTokens), the tool call, usage. */
interface Rendered {
  chunks: string[];
  text: string;
  toolCall: Step["toolCall"];
  finishReason: LanguageModelV4FinishReason;
  usage: LanguageModelV4Usage;
  textId: string;
}

function render(options: LanguageModelV4CallOptions, chunkSize: number): Rendered {
  const view = readTurn(options);
  const step = decideStep(view);
  const words = step.text.match(/\s*\S+\s*/g) ?? [];
  const limit = options.maxOutputTokens;
  const truncated = limit !== undefined && words.length > limit;
  const kept = truncated ? words.slice(0, Math.max(0, limit)) : words;
  if (truncated && kept.length > 0) kept[kept.length - 1] = (kept.at(-1) ?? "").trimEnd();

  const chunks: string[] = [];
  for (let i = 0; i < kept.length; i += chunkSize) chunks.push(kept.slice(i, i + chunkSize).join(""));
  const toolCall = truncated ? undefined : step.toolCall;
  const outputTokens = kept.length + (toolCall ? countWords(JSON.stringify(toolCall.input)) : 0);
  const inputTokens = countPromptWords(options.prompt);
  const unified = truncated ? "length" : toolCall ? "tool-calls" : "stop";
  return {
    chunks,
    text: chunks.join(""),
    toolCall,
    finishReason: { unified, raw: unified },
    usage: {
      inputTokens: { total: inputTokens, noCache: inputTokens, cacheRead: 0, cacheWrite: 0 },
      outputTokens: { total: outputTokens, text: outputTokens, reasoning: 0 },
    },
    textId: `offline-text-${view.userTurn}-${view.calls.length}`,
  };
}

function abortError(): DOMException {
  return new DOMException("The offline model call was aborted", "AbortError");
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(abortError());
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortError());
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

function toParts(rendered: Rendered): LanguageModelV4StreamPart[] {
  const parts: LanguageModelV4StreamPart[] = [{ type: "stream-start", warnings: [] }];
  if (rendered.chunks.length > 0) {
    const id = rendered.textId;
    parts.push({ type: "text-start", id });
    for (const delta of rendered.chunks) parts.push({ type: "text-delta", id, delta });
    parts.push({ type: "text-end", id });
  }
  if (rendered.toolCall) {
    const { toolCallId, toolName, input } = rendered.toolCall;
    parts.push({ type: "tool-call", toolCallId, toolName, input: JSON.stringify(input) });
  }
  parts.push({ type: "finish", finishReason: rendered.finishReason, usage: rendered.usage });
  return parts;
}

/**
 * The built-in model: a deterministic `LanguageModelV4` that needs no network and no key, so the
 * service runs and its tests pass out of the box. It reads the last user message, the tool results the
 * AI SDK loop has appended since, and the tools offered; each call it either emits one real tool call
 * (finish "tool-calls") or writes the final reply from the tool results (finish "stop"). It never
 * invents data that is not in a tool result, and calls each tool at most once per user turn.
 *
 * Intents (case-insensitive keyword rules on the last user message, first match wins; `intents.ts`):
 *
 * | Intent   | Example                              | Steps                                                         |
 * |----------|--------------------------------------|---------------------------------------------------------------|
 * | batch    | "several services in one transaction"| text: not available yet (coming soon), offer one at a time    |
 * | help     | "what can you do", "what is x402"    | text: what it can do                                          |
 * | budget   | "what is my budget", "how much have I spent", "limits", "balance" | get_budget -> limits, spent, remaining, balances |
 * | discover | "what services", "find services", "what can I buy" | discover_services -> name, price, networks      |
 * | cost     | "how much is the weather in Paris", "price of X" | discover -> get_quote -> price, network, remaining limits or refusal |
 * | get      | "what's the weather in Paris", "get me the BTC price", "latest news about AI", "buy the premium report" | discover -> best match by shared words -> fill the first required string param (city=Paris, symbol=BTC, topic=AI) -> get_quote -> cost estimate text + pay_and_fetch({maxUsd: quoted}) -> data, amount, tx hash; refused quote: explain, no payment |
 * | help     | anything else (greetings)            | text: what it can do                                          |
 *
 * Several paid asks in one message ("the weather in Paris and the price of BTC"; `splitAsks`) run one
 * after the other, each with its own discover -> get_quote -> pay_and_fetch and answer; at most two
 * per message, and the answer names any ask it did not do and why.
 *
 * Without the needed tool (payments not configured, or toolChoice "none") it says so in text. A tool
 * error or a refused/failed/unknown payment is explained from the result's own fields.
 *
 * Text streams a few words per text-delta; `maxOutputTokens` (1 token ~= 1 word) truncates it with
 * finish "length"; an aborted `abortSignal` stops the stream with an AbortError.
 *
 * @example
 * streamText({ model: createOfflineModel(), tools, stopWhen: isStepCount(5), prompt: "what's the weather in Paris?" })
 */
export function createOfflineModel(options: OfflineModelOptions = {}): LanguageModelV4 {
  const chunkSize = Math.max(1, Math.floor(options.chunkSize ?? 3));
  const delayMs = Math.max(0, options.delayMs ?? 0);

  return {
    specificationVersion: "v4",
    provider: "offline",
    modelId: "offline-1",
    supportedUrls: {},

    async doGenerate(call: LanguageModelV4CallOptions): Promise<LanguageModelV4GenerateResult> {
      if (call.abortSignal?.aborted) throw abortError();
      const rendered = render(call, chunkSize);
      const content: LanguageModelV4Content[] = [];
      if (rendered.text) content.push({ type: "text", text: rendered.text });
      if (rendered.toolCall) {
        const { toolCallId, toolName, input } = rendered.toolCall;
        content.push({ type: "tool-call", toolCallId, toolName, input: JSON.stringify(input) });
      }
      return { content, finishReason: rendered.finishReason, usage: rendered.usage, warnings: [] };
    },

    async doStream(call: LanguageModelV4CallOptions): Promise<LanguageModelV4StreamResult> {
      const signal = call.abortSignal;
      if (signal?.aborted) throw abortError();
      const parts = toParts(render(call, chunkSize));
      let index = 0;
      const stream = new ReadableStream<LanguageModelV4StreamPart>({
        async pull(controller) {
          const part = parts[index++];
          if (part === undefined) return controller.close();
          try {
            if (delayMs > 0 && part.type === "text-delta") await sleep(delayMs, signal);
            if (signal?.aborted) throw abortError();
          } catch (error) {
            return controller.error(error);
          }
          controller.enqueue(part);
          if (index === parts.length) controller.close();
        },
      });
      return { stream };
    },
  };
}
