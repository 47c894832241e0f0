import { readUIMessageStream, type UIMessageChunk } from "ai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  approvalBody,
  eventsToChunks,
  PaymentChatTransport,
  type PaymentUIMessage,
  paymentChatSchemas,
  toServiceMessages,
} from "../../src/client/ai.js";
import {
  ChatHttpError,
  type FinishPayload,
  type PaymentUpdate,
  type StreamEvent,
} from "../../src/client/index.js";
import { encodeLine } from "../../src/protocol/stream.js";
import { buildService } from "../helpers.js";
import { type Served, serve, TestChat } from "./support.js";

const FINISH: FinishPayload = {
  finishReason: "payment-complete",
  transactionHash: "0xabc",
  transactions: ["0xabc"],
  payments: [],
  usage: { inputTokens: 1, outputTokens: 2, totalTokens: 3 },
  model: "aimodel-2.0-flash-exp",
  provider: "offline",
  modelId: "offline-1",
};
const PAY = { paymentId: "pay_1", service: { url: "http://x/weather", name: "Weather" } };

async function* from(events: StreamEvent[]): AsyncGenerator<StreamEvent> {
  for (const event of events) yield event;
}

async function chunksOf(stream: ReadableStream<UIMessageChunk>): Promise<UIMessageChunk[]> {
  const out: UIMessageChunk[] = [];
  const reader = stream.getReader();
  for (let next = await reader.read(); !next.done; next = await reader.read()) out.push(next.value);
  return out;
}

async function lastMessage(stream: ReadableStream<UIMessageChunk>): Promise<PaymentUIMessage | undefined> {
  let last: PaymentUIMessage | undefined;
  for await (const message of readUIMessageStream<PaymentUIMessage>({ stream, onError: () => {} }))
    last = message;
  return last;
}

describe("events -> UI message chunks", () => {
  const events: StreamEvent[] = [
    { type: "text", text: "Weather costs $0.01. " },
    { type: "text", text: "Paying.\n" },
    { type: "payment", payment: { ...PAY, status: "quoted" } },
    { type: "payment", payment: { ...PAY, status: "settled", transaction: "0xabc" } },
    { type: "text", text: "It is sunny." },
    { type: "finish", finish: FINISH },
  ];

  it("text parts around a data-payment part keyed by payment id, finish with the d: payload", async () => {
    const chunks = await chunksOf(eventsToChunks(from(events)));
    expect(chunks.map((c) => c.type)).toEqual([
      "start",
      "text-start",
      "text-delta",
      "text-delta",
      "text-end",
      "data-payment",
      "data-payment",
      "text-start",
      "text-delta",
      "text-end",
      "finish",
    ]);
    expect(chunks.at(-1)).toEqual({
      type: "finish",
      finishReason: "stop",
      messageMetadata: { ...FINISH, approvals: [] },
    });
  });

  it("a card updates in place: one data-payment part per payment, at its first position", async () => {
    const message = await lastMessage(eventsToChunks(from(events)));
    expect(message?.parts.map((p) => p.type)).toEqual(["text", "data-payment", "text"]);
    expect(message?.parts[1]).toMatchObject({
      type: "data-payment",
      id: "pay_1",
      data: { status: "settled", transaction: "0xabc" },
    });
    expect(message?.metadata).toEqual({ ...FINISH, approvals: [] });
  });

  it("an e: is a data-error part where it happened and one error chunk after the finish", async () => {
    const error = { code: "limit_exceeded", message: "Paying $2.50 would exceed the perTransaction limit." };
    const chunks = await chunksOf(
      eventsToChunks(
        from([
          { type: "payment", payment: { ...PAY, status: "refused", reason: "perTransaction" } },
          { type: "error", error },
          { type: "text", text: "I could not pay." },
          { type: "finish", finish: { ...FINISH, finishReason: "limit-exceeded" } },
        ]),
      ),
    );
    expect(chunks.map((c) => c.type)).toEqual([
      "start",
      "data-payment",
      "data-error",
      "text-start",
      "text-delta",
      "text-end",
      "finish",
      "error",
    ]);
    expect(chunks.at(-2)).toMatchObject({
      finishReason: "other",
      messageMetadata: { finishReason: "limit-exceeded" },
    });
    expect(chunks.at(-1)).toEqual({ type: "error", errorText: error.message });
  });
});

describe("UI messages -> the service's messages", () => {
  it("joins text parts, leaves out messages without text, keeps within the bounds", () => {
    const messages = toServiceMessages([
      { role: "user", parts: [{ type: "text", text: "one" }] },
      {
        role: "assistant",
        parts: [
          { type: "text", text: "two " },
          { type: "data-payment", id: "p", data: {} },
          { type: "text", text: "three" },
        ],
      },
      { role: "assistant", parts: [{ type: "data-payment", id: "q", data: {} }] },
      { role: "user", parts: [{ type: "text", text: "four" }] },
    ]);
    expect(messages).toEqual([
      { role: "user", content: "one" },
      { role: "assistant", content: "two three" },
      { role: "user", content: "four" },
    ]);
    const long = Array.from({ length: 150 }, (_, i) => ({
      role: "user" as const,
      parts: [{ type: "text" as const, text: `m${i}` }],
    }));
    const bounded = toServiceMessages(long);
    expect(bounded).toHaveLength(100);
    expect(bounded.at(-1)?.content).toBe("m149");
    expect(toServiceMessages(long, { maxChars: 12 }).map((m) => m.content)).toEqual(["m147", "m148", "m149"]);
  });
});

describe("PaymentChatTransport driven as useChat drives it", () => {
  let served: Served;
  beforeAll(async () => {
    served = await serve(buildService());
  });
  afterAll(async () => {
    await served?.close();
  });

  it("a turn against the real service becomes an assistant message with the d: payload as metadata", async () => {
    const chat = new TestChat<PaymentUIMessage>({
      transport: new PaymentChatTransport({ baseUrl: served.url }),
      ...paymentChatSchemas,
    });
    await chat.sendMessage({ text: "hi" });
    expect(chat.status).toBe("ready");
    expect(chat.messages.map((m) => m.role)).toEqual(["user", "assistant"]);
    const answer = chat.messages[1];
    expect(answer?.parts.filter((p) => p.type === "text").map((p) => (p as { text: string }).text)).toEqual([
      "Hello there!",
    ]);
    expect(answer?.metadata).toMatchObject({ finishReason: "stop", model: "aimodel-2.0-flash-exp" });
    // The next turn sends the whole conversation.
    await chat.sendMessage({ text: "again" });
    expect(chat.messages).toHaveLength(4);
  });

  it("a refusal before the stream sets useChat's error to the typed ChatHttpError", async () => {
    const transport = new PaymentChatTransport({ baseUrl: served.url, fields: { walletAddress: "0xnope" } });
    const chat = new TestChat<PaymentUIMessage>({ transport });
    await chat.sendMessage({ text: "hi" });
    expect(chat.status).toBe("error");
    expect(chat.error).toBeInstanceOf(ChatHttpError);
    expect((chat.error as ChatHttpError).code).toBe("invalid_wallet");
  });

  it("unknown body fields are refused before sending", async () => {
    const chat = new TestChat<PaymentUIMessage>({
      transport: new PaymentChatTransport({ baseUrl: served.url }),
    });
    await chat.sendMessage({ text: "hi" }, { body: { temprature: 0.2 } });
    expect(chat.status).toBe("error");
    expect(chat.error?.message).toMatch(/unknown request field\(s\) temprature/);
  });

  it("an approval: the card carries what to sign; sendMessage(undefined, approvalBody(answer)) resumes in the same message", async () => {
    // A scripted service (the shapes of docs/protocol.md): the first request stops for approval,
    // the second (with `approval`) settles. It records what the transport sent.
    const sent: Array<Record<string, unknown>> = [];
    const awaiting: PaymentUpdate = {
      ...PAY,
      status: "awaiting_approval",
      amount: { atomic: "10000", usd: "0.01" },
      approval: {
        wallet: "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC",
        expiresAt: "2030-01-01T00:00:00.000Z",
        sign: { kind: "solana-transaction", method: "signTransaction", transaction: "AA==" },
      },
    };
    const fakeFetch = (async (_url: string, init?: RequestInit) => {
      const body = JSON.parse(String(init?.body)) as Record<string, unknown>;
      sent.push(body);
      const events: StreamEvent[] = body.approval
        ? [
            { type: "payment", payment: { ...awaiting, status: "reserved", approval: undefined } },
            { type: "payment", payment: { ...PAY, status: "settled", transaction: "0xabc" } },
            { type: "text", text: "Sunny." },
            { type: "finish", finish: FINISH },
          ]
        : [
            { type: "text", text: "Weather costs $0.01; approve it in your wallet." },
            { type: "payment", payment: awaiting },
            {
              type: "finish",
              finish: {
                ...FINISH,
                finishReason: "approval-required",
                approvals: [{ paymentId: "pay_1", expiresAt: "2030-01-01T00:00:00.000Z" }],
              },
            },
          ];
      return new Response(events.map(encodeLine).join(""), {
        headers: { "content-type": "text/plain" },
      });
    }) as typeof fetch;
    const transport = new PaymentChatTransport({
      baseUrl: "http://service.test",
      fetch: fakeFetch,
      fields: () => ({ walletAddress: "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC" }),
    });
    const chat = new TestChat<PaymentUIMessage>({ transport, ...paymentChatSchemas });
    await chat.sendMessage({ text: "Weather in Paris?" });
    const asked = chat.messages[1];
    expect(asked?.metadata?.finishReason).toBe("approval-required");
    const card = asked?.parts.find((p) => p.type === "data-payment");
    expect(card).toMatchObject({
      id: "pay_1",
      data: { status: "awaiting_approval", approval: { sign: { kind: "solana-transaction" } } },
    });

    await chat.sendMessage(undefined, approvalBody({ paymentId: "pay_1", transaction: "AQ==" }));
    expect(sent[1]).toEqual({
      walletAddress: "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC",
      approval: { paymentId: "pay_1", transaction: "AQ==" },
      messages: [
        { role: "user", content: "Weather in Paris?" },
        { role: "assistant", content: "Weather costs $0.01; approve it in your wallet." },
      ],
    });
    // The same assistant message goes on: its one card now settled, the answer after it.
    expect(chat.messages).toHaveLength(2);
    const resumed = chat.messages[1];
    expect(resumed?.id).toBe(asked?.id);
    expect(resumed?.parts.filter((p) => p.type === "data-payment")).toEqual([
      expect.objectContaining({
        id: "pay_1",
        data: expect.objectContaining({ status: "settled", transaction: "0xabc" }),
      }),
    ]);
    expect(resumed?.metadata?.finishReason).toBe("payment-complete");
    expect(resumed?.metadata?.approvals).toEqual([]);
  });

  it("with paymentChatSchemas, a malformed payment part is refused as it arrives", async () => {
    const transport = {
      sendMessages: async () =>
        new ReadableStream<UIMessageChunk>({
          start(controller) {
            controller.enqueue({ type: "start" });
            controller.enqueue({
              type: "data-payment",
              id: "pay_1",
              data: { paymentId: "pay_1", status: "paid?" },
            });
            controller.close();
          },
        }),
      reconnectToStream: async () => null,
    };
    const unchecked = new TestChat<PaymentUIMessage>({ transport });
    await unchecked.sendMessage({ text: "hi" });
    expect(unchecked.status).toBe("ready");
    const chat = new TestChat<PaymentUIMessage>({ transport, ...paymentChatSchemas });
    await chat.sendMessage({ text: "hi" });
    expect(chat.status).toBe("error");
    expect(chat.error?.message).toMatch(/data-payment|pay_1|status/);
  });
});
