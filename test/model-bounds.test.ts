/**
 * A model may obey any instruction a paid answer injects, and ignore `maxTokens`: what one turn
 * takes from it is bounded (src/agent/bounds.ts), whatever it sends.
 */
import type { LanguageModelV4StreamPart } from "@ai-sdk/provider";
import { type ToolSet, tool } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { expect, it } from "vitest";
import { z } from "zod";
import { CUT_NOTICE, OUTPUT_BOUNDS } from "../src/agent/bounds.js";
import { silentLogger } from "../src/log/index.js";
import { unsafeContentReason } from "../src/protocol/content.js";
import { createService } from "../src/service.js";
import { chatRequest, readEvents, singleModelRegistry, testConfig, textModel, USER_HI } from "./helpers.js";
import { scriptedModel } from "./scripted.js";

/** One tool, `name`, that counts its runs (`ran()`). */
function counted(name: string, inputSchema: z.ZodType<Record<string, unknown>>) {
  let runs = 0;
  const tools = (): ToolSet => ({
    [name]: tool({
      inputSchema,
      execute: async () => {
        runs += 1;
        return { ok: true };
      },
    }),
  });
  return { tools, ran: () => runs };
}

async function ask(model: MockLanguageModelV4, tools?: () => ToolSet) {
  const { app } = createService(testConfig(), silentLogger, {
    models: singleModelRegistry(model),
    ...(tools ? { tools } : {}),
  });
  return readEvents(
    await app.request("/api/chat", chatRequest({ messages: [{ role: "user", content: "go" }] })),
  );
}

const USAGE = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};

/** A model whose first step sends `first` then `parts(i)` for i = 0.. until undefined, pulled lazily. */
function lazyModel(
  first: LanguageModelV4StreamPart[],
  parts: (i: number) => LanguageModelV4StreamPart | undefined,
) {
  const pulled = { count: 0 };
  const model = new MockLanguageModelV4({
    doStream: async (options) => {
      const later = options.prompt.some((m) => m.role === "tool");
      let i = 0;
      const queue = later
        ? [
            { type: "text-start", id: "t" },
            { type: "text-delta", id: "t", delta: "done" },
            { type: "text-end", id: "t" },
            { type: "finish", finishReason: { unified: "stop", raw: "stop" }, usage: USAGE },
          ]
        : [{ type: "stream-start", warnings: [] }, ...first];
      return {
        stream: new ReadableStream<LanguageModelV4StreamPart>({
          pull(controller) {
            const next =
              (queue.shift() as LanguageModelV4StreamPart | undefined) ?? (later ? undefined : parts(i++));
            if (!later && queue.length === 0) pulled.count += 1;
            if (next) controller.enqueue(next);
            else controller.close();
          },
        }),
      };
    },
  });
  return { model, pulled };
}

// Found by a black-box run: a model's 20 MB answer was streamed, and kept for replays, whole.
it("passes on at most the bound of a model's words, then says the answer was cut", async () => {
  const piece = "x".repeat(100_000);
  const model = new MockLanguageModelV4({
    doStream: async () => ({
      stream: new ReadableStream<LanguageModelV4StreamPart>({
        start(controller) {
          controller.enqueue({ type: "stream-start", warnings: [] });
          controller.enqueue({ type: "text-start", id: "t" });
          for (let i = 0; i < 200; i++) controller.enqueue({ type: "text-delta", id: "t", delta: piece });
          controller.enqueue({ type: "text-end", id: "t" });
          controller.enqueue({
            type: "finish",
            finishReason: { unified: "stop", raw: "stop" },
            usage: {
              inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
              outputTokens: { total: 1, text: 1, reasoning: 0 },
            },
          });
          controller.close();
        },
      }),
    }),
  });
  const events = await ask(model);
  const text = events.flatMap((e) => (e.type === "text" ? [e.text] : [])).join("");
  expect(text).toBe(`${"x".repeat(OUTPUT_BOUNDS.textChars)}${CUT_NOTICE}`);
  expect(events.at(-1)?.type).toBe("finish");
});

// Found by a black-box run: 1,000 calls in a step made 1,000 requests; 1 MB inputs were quoted back.
it("runs at most the bound of tool calls in a step, and never quotes an oversized input back", async () => {
  const { tools, ran } = counted("look", z.object({ q: z.string() }));
  const many = Array.from({ length: 40 }, (_, i) => ({ toolName: "look", input: { q: `q${i}` } }));
  const huge = { toolName: "look", input: { q: "A".repeat(1_000_000) } };
  const model = scriptedModel([many, [huge]]);
  await ask(model, tools);
  expect(ran()).toBe(OUTPUT_BOUNDS.callsPerStep);
  // What the model was sent at its last step: bounded, without the megabyte it sent.
  const last = JSON.stringify(model.doStreamCalls.at(-1)?.prompt);
  expect(last).not.toContain("A".repeat(OUTPUT_BOUNDS.toolInputChars));
  expect(last).toContain("at most 16384 are read");
  expect(last.length).toBeLessThan(100_000);
});

// Found by a re-test: pieces of one call's input were all held (500 MB each) before the bound saw it.
it("stops reading a step whose tool input passes the bound in pieces, and refuses the call", async () => {
  const { tools, ran } = counted("look", z.object({ q: z.string() }));
  const piece = "A".repeat(1000);
  const { model, pulled } = lazyModel([{ type: "tool-input-start", id: "c1", toolName: "look" }], (i) =>
    i < 100_000 ? { type: "tool-input-delta", id: "c1", delta: piece } : undefined,
  );
  const events = await ask(model, tools);
  expect(pulled.count).toBeLessThan(100);
  expect(ran()).toBe(0);
  expect(JSON.stringify(model.doStreamCalls.at(-1)?.prompt)).toContain("at most 16384 are read");
  expect(events.at(-1)?.type).toBe("finish");
});

// Found by a re-test: a surrogate pair split across two pieces at the bound left half of it.
it("never ends the words on half a surrogate pair, and stops reading there", async () => {
  const { model, pulled } = lazyModel(
    [
      { type: "text-start", id: "t" },
      { type: "text-delta", id: "t", delta: `${"a".repeat(OUTPUT_BOUNDS.textChars - 1)}\uD83D` },
      { type: "text-delta", id: "t", delta: "\uDE00tail" },
    ],
    (i) => (i < 1000 ? { type: "text-delta", id: "t", delta: "more" } : undefined),
  );
  const events = await ask(model);
  const text = events.flatMap((e) => (e.type === "text" ? [e.text] : [])).join("");
  expect(text.isWellFormed()).toBe(true);
  expect(text).toBe(`${"a".repeat(OUTPUT_BOUNDS.textChars - 1)}${CUT_NOTICE}`);
  expect(pulled.count).toBeLessThan(5);
  expect(events.at(-1)?.type).toBe("finish");
});

// Found by a re-test: the one-object answer (Accept: application/json) passed a model's escapes on.
it("answers Accept: application/json without the characters the stream's lines drop", async () => {
  const { model } = lazyModel(
    [
      { type: "text-start", id: "t" },
      { type: "text-delta", id: "t", delta: "Hello \u001b]0;PWNED\u0007\u001b[2J \u202egnp.live\u202c" },
      { type: "text-end", id: "t" },
      { type: "finish", finishReason: { unified: "stop", raw: "stop" }, usage: USAGE },
    ],
    () => undefined,
  );
  const { app } = createService(testConfig(), silentLogger, { models: singleModelRegistry(model) });
  const response = await app.request(
    "/api/chat",
    chatRequest({ messages: [{ role: "user", content: "go" }] }, { Accept: "application/json" }),
  );
  const body = (await response.json()) as { text: string };
  expect(body.text).toBe("Hello ]0;PWNED[2J gnp.live");
});

// Found by a review: hidden bytes sent one variation selector per text piece passed each piece's check.
it("sends no run of invisible selectors split across the model's pieces, on lines or as JSON", async () => {
  const hidden = [..."secret"].map((ch) => String.fromCodePoint(0xe0100 + (ch.codePointAt(0) ?? 0)));
  const pieces = ["Here 😀", ...hidden, " and 🏳\uFE0F", "\u200D🌈 done"];
  for (const accept of ["text/plain", "application/json"]) {
    const { app } = createService(testConfig(), silentLogger, {
      models: singleModelRegistry(textModel(pieces)),
    });
    const response = await app.request("/api/chat", chatRequest(USER_HI, { Accept: accept }));
    const text =
      accept === "application/json"
        ? ((await response.json()) as { text: string }).text
        : (await readEvents(response)).flatMap((e) => (e.type === "text" ? [e.text] : [])).join("");
    expect(unsafeContentReason(text), accept).toBeUndefined();
    // One selector may stay (it was sent before the next made it a run); the emoji's join stays whole.
    expect(text, accept).toBe(`Here 😀${hidden[0]} and 🏳\uFE0F\u200D🌈 done`);
  }
});

// Found by a re-test: 20,000 calls a step, each under the input bound, were all read (160 MB a turn).
it("ends a step at the call past the bound, however small each call is", async () => {
  const { tools, ran } = counted("look", z.object({ q: z.string() }));
  const input = JSON.stringify({ q: "x".repeat(8000) });
  // Each call: its start, its input in two pieces, then the whole call.
  const { model, pulled } = lazyModel([], (i) => {
    const id = `c${Math.floor(i / 4)}`;
    if (i >= 80_000) return undefined;
    switch (i % 4) {
      case 0:
        return { type: "tool-input-start", id, toolName: "look" };
      case 1:
        return { type: "tool-input-delta", id, delta: input.slice(0, 4000) };
      case 2:
        return { type: "tool-input-delta", id, delta: input.slice(4000) };
      default:
        return { type: "tool-call", toolCallId: id, toolName: "look", input };
    }
  });
  const events = await ask(model, tools);
  expect(ran()).toBe(OUTPUT_BOUNDS.callsPerStep);
  expect(pulled.count).toBeLessThan(100); // of 80,000 parts: the step ended at call 17
  expect(events.at(-1)?.type).toBe("finish");
});

// Found by a re-test: a tool whose schema takes no arguments ran with the "too large" input.
it("refuses a too-large input even to a tool whose schema takes any object", async () => {
  const { tools, ran } = counted("budget", z.object({}));
  const model = scriptedModel([[{ toolName: "budget", input: { pad: "B".repeat(100_000) } }]]);
  await ask(model, tools);
  expect(ran()).toBe(0);
  expect(JSON.stringify(model.doStreamCalls.at(-1)?.prompt)).toContain("too large: the input was");
});
