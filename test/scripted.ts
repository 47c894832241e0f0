import type { LanguageModelV4CallOptions, LanguageModelV4StreamPart } from "@ai-sdk/provider";
import { MockLanguageModelV4 } from "ai/test";

/** A tool call a scripted model makes. */
export interface Call {
  toolName: string;
  input: Record<string, unknown>;
}

const USAGE = {
  inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 5, text: 5, reasoning: 0 },
};

/**
 * A model that makes the tool calls of `steps[i]` at step i (read from how many tool results the
 * prompt holds), then says "done". Every prompt it was given is kept in `doStreamCalls`, so a test
 * can read exactly what the model saw of each tool's result.
 */
export function scriptedModel(steps: Call[][]): MockLanguageModelV4 {
  return new MockLanguageModelV4({
    modelId: "scripted",
    doStream: async (options: LanguageModelV4CallOptions) => {
      const step = options.prompt.filter((m) => m.role === "tool").length;
      const calls = steps[step] ?? [];
      const parts: LanguageModelV4StreamPart[] = [{ type: "stream-start", warnings: [] }];
      for (const [i, c] of calls.entries()) {
        parts.push({
          type: "tool-call",
          toolCallId: `call-${step}-${i}`,
          toolName: c.toolName,
          input: JSON.stringify(c.input),
        });
      }
      if (calls.length > 0) {
        parts.push({
          type: "finish",
          finishReason: { unified: "tool-calls", raw: "tool_calls" },
          usage: USAGE,
        });
      } else {
        parts.push(
          { type: "text-start", id: "t" },
          { type: "text-delta", id: "t", delta: "done" },
          { type: "text-end", id: "t" },
          { type: "finish", finishReason: { unified: "stop", raw: "stop" }, usage: USAGE },
        );
      }
      return {
        stream: new ReadableStream<LanguageModelV4StreamPart>({
          start(controller) {
            for (const part of parts) controller.enqueue(part);
            controller.close();
          },
        }),
      };
    },
  });
}

/** Every tool result the model was shown, as JSON text, across all its calls. */
export function toolResultsSeen(model: MockLanguageModelV4): string {
  return JSON.stringify(
    model.doStreamCalls.flatMap((call) =>
      call.prompt.flatMap((m) => (m.role === "tool" ? m.content.map((part) => part) : [])),
    ),
  );
}
