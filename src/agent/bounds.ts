import type { LanguageModelV4, LanguageModelV4StreamPart } from "@ai-sdk/provider";
import { wrapLanguageModel } from "ai";

/**
 * What one turn takes from a model, whatever the model sends. A model may obey any instruction a
 * paid answer injects, and a provider's `maxOutputTokens` binds only a model that keeps to it; the
 * service's own memory, its outbound calls and the client's stream must not follow such a model.
 * - words (`text`): at most {@link OutputBounds.textChars} in a turn; there the words end with
 *   {@link CUT_NOTICE} and the step ends, the model's answer no longer read;
 * - reasoning: at most as many characters; the rest is dropped;
 * - tool calls: at most {@link OutputBounds.callsPerStep} in one step (each may call a service);
 *   at the next one the step ends, the model's answer no longer read (so one step's inputs hold
 *   at most that many times the bound below);
 * - a tool call's input (JSON text): past {@link OutputBounds.toolInputChars} it is replaced by a
 *   short sentence saying so (a JSON string, which every tool's schema refuses, not an object a
 *   lenient one would take as no arguments). Kept whole, the AI SDK would quote it in its refusal, sent back to the model beside the call itself at every later step. Streamed in
 *   pieces, a provider would hold it all before the call is whole: once its pieces pass the bound,
 *   the step ends there, the model's answer no longer read.
 * Tool input pieces are not passed on: the whole call arrives as `tool-call`, and nothing here
 * shows a call while it streams.
 */
export interface OutputBounds {
  textChars: number;
  callsPerStep: number;
  toolInputChars: number;
}

export const OUTPUT_BOUNDS: OutputBounds = { textChars: 256_000, callsPerStep: 16, toolInputChars: 16_384 };

export const CUT_NOTICE = "\n\n[The answer was cut here: it was longer than this service passes on.]";

type Part = LanguageModelV4StreamPart;

const NO_USAGE = {
  inputTokens: { total: undefined, noCache: undefined, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: undefined, text: undefined, reasoning: undefined },
};

/** The end of a step cut short: `reason` as the model would have said it. */
const ended = (unified: "length" | "tool-calls"): Part => ({
  type: "finish",
  finishReason: { unified, raw: "cut by the service's bounds" },
  usage: NO_USAGE,
});

const isHighSurrogate = (char: string | undefined) => char !== undefined && /[\uD800-\uDBFF]/.test(char);

/** `text` cut to `room` characters, never ending on the first half of a surrogate pair. */
function cut(text: string, room: number): string {
  const kept = text.length <= room ? text : text.slice(0, Math.max(0, room));
  return kept.length === room && isHighSurrogate(kept.at(-1)) ? kept.slice(0, -1) : kept;
}

/** One step's state, and the turn's counts it shares with the turn's other steps. */
interface StepState {
  /** The tool calls this step has begun (streamed in pieces or whole), at most the bound. */
  calls: Set<string>;
  /** Tool calls streaming in pieces: their name and how many characters came. */
  inputs: Map<string, { toolName: string; size: number }>;
}

/** `model` bounded for one turn: the counts of words and reasoning run over every step of it. */
export function boundedForTurn(
  model: LanguageModelV4,
  bounds: OutputBounds = OUTPUT_BOUNDS,
): LanguageModelV4 {
  const used = { text: 0, reasoning: 0 };
  const take = (kind: "text" | "reasoning", delta: string): string => {
    const kept = cut(delta, Math.max(0, bounds.textChars - used[kind]));
    used[kind] += kept.length;
    return kept;
  };
  const tooLarge = (size: number) =>
    JSON.stringify(`too large: the input was ${size} characters; at most ${bounds.toolInputChars} are read`);
  /** Whether the step may have this call: one it began, or a new one within the bound. */
  const admits = (step: StepState, id: string): boolean => {
    if (step.calls.has(id)) return true;
    if (step.calls.size >= bounds.callsPerStep) return false;
    step.calls.add(id);
    return true;
  };
  const call = (part: Extract<Part, { type: "tool-call" }>): Part =>
    part.input.length <= bounds.toolInputChars ? part : { ...part, input: tooLarge(part.input.length) };
  /** A call past the bound: the step ends before it. */
  const tooMany = (): { parts: Part[]; stop: true } => ({ parts: [ended("tool-calls")], stop: true });
  /** What goes on of one part, and whether the step ends there (the rest unread). */
  const bound = (part: Part, step: StepState): { parts: Part[]; stop?: true } => {
    switch (part.type) {
      case "text-delta": {
        const delta = take("text", part.delta);
        // Nothing cut and room left: on. Else the words end here (never half a surrogate pair).
        if (delta.length === part.delta.length && used.text < bounds.textChars)
          return { parts: [{ ...part, delta }] };
        const notice: Part = { ...part, delta: `${delta}${CUT_NOTICE}` };
        return { parts: [notice, { type: "text-end", id: part.id }, ended("length")], stop: true };
      }
      case "reasoning-delta": {
        const delta = take("reasoning", part.delta);
        return { parts: delta ? [{ ...part, delta }] : [] };
      }
      case "tool-input-start":
        if (!admits(step, part.id)) return tooMany();
        step.inputs.set(part.id, { toolName: part.toolName, size: 0 });
        return { parts: [] };
      case "tool-input-delta": {
        const input = step.inputs.get(part.id);
        if (!input) return { parts: [] };
        input.size += part.delta.length;
        if (input.size <= bounds.toolInputChars) return { parts: [] };
        const refused: Part = {
          type: "tool-call",
          toolCallId: part.id,
          toolName: input.toolName,
          input: tooLarge(input.size),
        };
        return { parts: [refused, ended("tool-calls")], stop: true };
      }
      case "tool-input-end":
        step.inputs.delete(part.id);
        return { parts: [] };
      case "tool-call":
        step.inputs.delete(part.toolCallId);
        return admits(step, part.toolCallId) ? { parts: [call(part)] } : tooMany();
      default:
        return { parts: [part] };
    }
  };
  return wrapLanguageModel({
    model,
    middleware: {
      wrapStream: async ({ doStream }) => {
        const result = await doStream();
        const reader = result.stream.getReader();
        const step: StepState = { calls: new Set(), inputs: new Map() };
        const stream = new ReadableStream<Part>({
          async pull(controller) {
            for (;;) {
              const next = await reader.read();
              if (next.done) return controller.close();
              const { parts, stop } = bound(next.value, step);
              for (const part of parts) controller.enqueue(part);
              if (stop) {
                // Nothing more of this answer is read: the provider stops holding what it sends.
                await reader.cancel().catch(() => {});
                return controller.close();
              }
              if (parts.length > 0) return;
            }
          },
          cancel: (reason) => reader.cancel(reason),
        });
        return { ...result, stream };
      },
    },
  });
}
