import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ChatClient,
  ChatHttpError,
  ProtocolError,
  resumeBody,
  type StreamEvent,
  TurnCollector,
  withAssistantText,
} from "../../src/client/index.js";
import { buildService, singleModelRegistry, textModel } from "../helpers.js";
import { type Served, serve } from "./support.js";

const HI = { messages: [{ role: "user" as const, content: "hi" }] };

describe("SDK against the real service", () => {
  let served: Served;
  let slow: Served;

  beforeAll(async () => {
    served = await serve(buildService());
    slow = await serve(
      buildService(
        {},
        { models: singleModelRegistry(textModel(["a", "b", "c", "d", "e", "f"], { delayMs: 150 })) },
      ),
    );
  });
  afterAll(async () => {
    await Promise.all([served?.close(), slow?.close()]);
  });

  it("reads a turn as typed events, the same in both framings", async () => {
    const client = new ChatClient({ baseUrl: served.url });
    const seen: Record<string, StreamEvent[]> = {};
    for (const framing of ["lines", "sse"] as const) {
      const turn = await client.chat(HI, { framing });
      expect(turn.protocolVersion).toBe("1");
      expect(turn.requestId).toBeTruthy();
      expect(turn.response.headers.get("content-type")).toContain(
        framing === "sse" ? "text/event-stream" : "text/plain",
      );
      const events: StreamEvent[] = [];
      for await (const event of turn) events.push(event);
      seen[framing] = events;
    }
    expect(seen.lines?.map((e) => e.type)).toEqual(["text", "text", "text", "finish"]);
    expect(seen.sse).toEqual(seen.lines);
    const last = seen.lines?.at(-1);
    expect(last?.type === "finish" && last.finish.finishReason).toBe("stop");
  });

  it("collects a turn: text, payments, errors, finish", async () => {
    const result = await (await new ChatClient({ baseUrl: served.url }).chat(HI)).collect();
    expect(result.text).toBe("Hello there!");
    expect(result.payments).toEqual([]);
    expect(result.errors).toEqual([]);
    expect(result.finish.finishReason).toBe("stop");
  });

  it("throws a typed error carrying the problem+json body", async () => {
    const client = new ChatClient({ baseUrl: served.url });
    const error = await client
      .chat({ messages: [{ role: "user", content: "hi" }], walletAddress: "0x123" })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ChatHttpError);
    const e = error as ChatHttpError;
    expect(e.status).toBe(400);
    expect(e.code).toBe("invalid_wallet");
    expect(e.problem).toMatchObject({
      type: expect.stringContaining("invalid-wallet"),
      status: 400,
      code: "invalid_wallet",
    });
    expect(e.problem.errors?.[0]?.path).toBe("walletAddress");
    expect(e.message).toBe(e.problem.detail);
  });

  it("refuses an unknown bearer token with 401 unauthorized", async () => {
    const client = new ChatClient({ baseUrl: served.url, token: "not-a-known-token-at-all" });
    await expect(client.chat(HI)).rejects.toMatchObject({ status: 401, code: "unauthorized" });
  });

  it("stops reading when aborted", async () => {
    const client = new ChatClient({ baseUrl: slow.url });
    const controller = new AbortController();
    const turn = await client.chat(HI, { signal: controller.signal });
    const texts: string[] = [];
    const reading = (async () => {
      for await (const event of turn) {
        if (event.type === "text") {
          texts.push(event.text);
          controller.abort(new DOMException("stopped by the test", "AbortError"));
        }
      }
    })();
    await expect(reading).rejects.toMatchObject({ name: "AbortError" });
    expect(texts).toEqual(["a"]);
  });

  it("says so when the stream ends before its d: line", async () => {
    const fakeFetch = (async () =>
      new Response('0:"half an answer"\n', { headers: { "content-type": "text/plain" } })) as typeof fetch;
    const turn = await new ChatClient({ baseUrl: "http://127.0.0.1:1", fetch: fakeFetch }).chat(HI);
    await expect(turn.collect()).rejects.toBeInstanceOf(ProtocolError);
  });

  // A black-box review (h34): a turn read on until the connection closed, so a server (or a
  // proxy) that held it open after d: left collect() waiting for ever.
  it("ends a turn at its d: line though the connection stays open", async () => {
    const usage = { inputTokens: 1, outputTokens: 1, totalTokens: 2 };
    const d = JSON.stringify({
      finishReason: "stop",
      transactions: [],
      payments: [],
      usage,
      model: "aimodel-2.0-flash-exp",
      provider: "offline",
      modelId: "offline-1",
    });
    let cancelled = false;
    const held = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(`0:"done"\nd:${d}\n`));
      },
      cancel() {
        cancelled = true;
      },
    });
    const fakeFetch = (async () => new Response(held)) as typeof fetch;
    const turn = await new ChatClient({ baseUrl: "http://127.0.0.1:1", fetch: fakeFetch }).chat(HI);
    const result = await Promise.race([
      turn.collect(),
      new Promise((resolve) => setTimeout(() => resolve("still waiting"), 2000)),
    ]);
    expect(result).toMatchObject({ text: "done", finish: { finishReason: "stop" } });
    expect(cancelled).toBe(true);
  });

  it("describes a non-problem error answer by its status", async () => {
    const fakeFetch = (async () => new Response("<html>Bad gateway</html>", { status: 502 })) as typeof fetch;
    const error = await new ChatClient({ baseUrl: "http://127.0.0.1:1", fetch: fakeFetch })
      .chat(HI)
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 502, code: "http_502" });
  });

  it("folds events with TurnCollector: the latest update of each payment, awaiting ones apart", () => {
    const collector = new TurnCollector();
    const base = { paymentId: "pay_1", service: { url: "http://x" } };
    collector.add({ type: "payment", payment: { ...base, status: "quoted" } });
    collector.add({ type: "text", text: "ok" });
    collector.add({ type: "payment", payment: { ...base, status: "settled", transaction: "0xabc" } });
    collector.add({
      type: "finish",
      finish: {
        finishReason: "payment-complete",
        transactions: ["0xabc"],
        payments: [],
        usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 },
        model: "m",
        provider: "p",
        modelId: "i",
      },
    });
    const result = collector.result();
    expect(result.payments).toEqual([{ ...base, status: "settled", transaction: "0xabc" }]);
    expect(result.updates).toHaveLength(2);
    expect(result.awaitingApproval).toEqual([]);
  });
});

describe("SDK and the rate limit", () => {
  let served: Served;
  beforeAll(async () => {
    served = await serve(
      buildService({ RATE_LIMIT_POINTS: "1", RATE_LIMIT_DURATION_S: "60", RATE_LIMIT_BLOCK_S: "1" }),
    );
  });
  afterAll(async () => {
    await served?.close();
  });

  it("waits out Retry-After on 429 and sends again, unless told not to", async () => {
    const waits: number[] = [];
    const client = new ChatClient({
      baseUrl: served.url,
      onRateLimited: ({ waitSeconds }) => waits.push(waitSeconds),
    });
    await (await client.chat(HI)).collect();
    // Told not to wait: the 429 itself, typed, with its Retry-After.
    const refused = await client.chat(HI, { rateLimitRetry: false }).catch((e: unknown) => e);
    expect(refused).toMatchObject({ status: 429, code: "rate_limited", retryAfterSeconds: 1 });
    expect(waits).toEqual([]);
    // By default: waits the second out, then the turn runs.
    const started = Date.now();
    const result = await (await client.chat(HI)).collect();
    expect(result.finish.finishReason).toBe("stop");
    expect(waits.length).toBeGreaterThanOrEqual(1);
    expect(waits[0]).toBe(1);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
  });

  it("an abort ends the wait for Retry-After", async () => {
    const client = new ChatClient({ baseUrl: served.url, rateLimitRetry: { maxRetries: 5 } });
    const controller = new AbortController();
    // Spend the quota (or find it spent), then ask again: that one waits.
    await client
      .chat(HI, { rateLimitRetry: false })
      .then((turn) => turn.collect())
      .catch(() => {});
    const pending = client.chat(HI, { signal: controller.signal });
    setTimeout(() => controller.abort(new DOMException("gave up", "AbortError")), 300);
    await expect(pending).rejects.toMatchObject({ name: "AbortError" });
  });
});

describe("resuming after an approval", () => {
  it("the body: the conversation, the assistant's words, the answer; a resumed turn's words join the same message", () => {
    const body = { ...HI, walletAddress: "0xabc", approval: { paymentId: "old", reject: true as const } };
    const answer = { paymentId: "pay_1", signature: `0x${"1".repeat(130)}` as const };
    expect(resumeBody(body, "It costs $0.01.", answer)).toEqual({
      walletAddress: "0xabc",
      messages: [...HI.messages, { role: "assistant", content: "It costs $0.01." }],
      approval: answer,
    });
    expect(resumeBody(body, "  ", answer).messages).toEqual(HI.messages);
    const once = withAssistantText(HI.messages, "Approve it.");
    expect(withAssistantText(once, "Paid.")).toEqual([
      ...HI.messages,
      { role: "assistant", content: "Approve it.\n\nPaid." },
    ]);
  });
});
