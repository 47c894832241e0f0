import type { LanguageModelV4, LanguageModelV4StreamPart } from "@ai-sdk/provider";
import { wrapLanguageModel } from "ai";

/**
 * What one turn takes from a model, whatever the model sends. A model may obey any instruction a
 * paid answer injects, and a provider's `maxOutputTokens` binds only a model that keeps to it; the
 * service's own memory, its outbound calls and the client's stream must not follow such a model.
 * - words (`text`) and reasoning: at most {@link OutputBounds.textChars} each in a turn; past that
 *   the words end with {@link CUT_NOTICE}, once, and the rest is dropped;
 * - tool calls: at most {@link OutputBounds.callsPerStep} in one step (each may call a service);
 *   the rest are dropped, as if never made;
 * - a tool call's input (JSON text): past {@link OutputBounds.toolInputChars} it is replaced by a
 *   small object saying so, which the tool's schema refuses. Kept whole, the AI SDK would quote it
 *   in its refusal, sent back to the model beside the call itself at every later step.
 * Tool input deltas are dropped: the whole call arrives as `tool-call`, and nothing here shows a
 * call while it streams.
 */
export interface OutputBounds {
  textChars: number;
  callsPerStep: number;
  toolInputChars: number;
}

export const OUTPUT_BOUNDS: OutputBounds = { textChars: 256_000, callsPerStep: 16, toolInputChars: 16_384 };

export const CUT_NOTICE = "\n\n[The answer was cut here: it was longer than this service passes on.]";

/** `text` cut to `room` characters, never between the two halves of a surrogate pair. */
function cut(text: string, room: number): string {
  if (text.length <= room) return text;
  const end = /[\uD800-\uDBFF]/.test(text[room - 1] ?? "") ? room - 1 : room;
  return text.slice(0, Math.max(0, end));
}

/** `model` bounded for one turn: the counts run over every step of the turn. */
export function boundedForTurn(
  model: LanguageModelV4,
  bounds: OutputBounds = OUTPUT_BOUNDS,
): LanguageModelV4 {
  const used = { text: 0, reasoning: 0 };
  let noticed = false;
  const take = (kind: "text" | "reasoning", delta: string): string => {
    const kept = cut(delta, Math.max(0, bounds.textChars - used[kind]));
    used[kind] += kept.length;
    return kept;
  };
  const bound = (part: LanguageModelV4StreamPart, calls: { made: number }) => {
    switch (part.type) {
      case "text-delta": {
        if (noticed) return [];
        const delta = take("text", part.delta);
        if (delta.length === part.delta.length) return [part];
        noticed = true;
        return [{ ...part, delta: `${delta}${CUT_NOTICE}` }];
      }
      case "reasoning-delta": {
        const delta = take("reasoning", part.delta);
        return delta ? [{ ...part, delta }] : [];
      }
      case "tool-input-start":
      case "tool-input-delta":
      case "tool-input-end":
        return [];
      case "tool-call": {
        calls.made += 1;
        if (calls.made > bounds.callsPerStep) return [];
        if (part.input.length <= bounds.toolInputChars) return [part];
        const tooLarge = `the input was ${part.input.length} characters; at most ${bounds.toolInputChars} are read`;
        return [{ ...part, input: JSON.stringify({ tooLarge }) }];
      }
      default:
        return [part];
    }
  };
  return wrapLanguageModel({
    model,
    middleware: {
      wrapStream: async ({ doStream }) => {
        const result = await doStream();
        const calls = { made: 0 };
        const stream = result.stream.pipeThrough(
          new TransformStream<LanguageModelV4StreamPart, LanguageModelV4StreamPart>({
            transform(part, controller) {
              for (const kept of bound(part, calls)) controller.enqueue(kept);
            },
          }),
        );
        return { ...result, stream };
      },
    },
  });
}
