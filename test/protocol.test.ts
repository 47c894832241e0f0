import { describe, expect, it } from "vitest";
import {
  decodeLine,
  encodeLine,
  type FinishPayload,
  frame,
  ProtocolError,
  StreamDecoder,
  type StreamEvent,
} from "../src/protocol/index.js";

const finish: FinishPayload = {
  finishReason: "payment-complete",
  transactionHash: "0xabc",
  transactions: ["0xabc"],
  payments: [{ paymentId: "pay_1", status: "settled", service: "http://x/weather", amountUsd: "0.01" }],
  usage: { inputTokens: 3, outputTokens: 4, totalTokens: 7 },
  model: "aimodel-2.0-flash-exp",
  provider: "offline",
  modelId: "offline-1",
};

const events: StreamEvent[] = [
  { type: "text", text: 'Hi "there"\n' },
  {
    type: "payment",
    payment: {
      paymentId: "pay_1",
      status: "settled",
      service: { url: "http://x/weather" },
      amount: { atomic: "10000", usd: "0.01" },
      network: "eip155:31337",
      transaction: "0xabc",
    },
  },
  { type: "error", error: { code: "limit_exceeded", message: "over", limit: "daily" } },
  { type: "finish", finish },
];

describe("stream protocol", () => {
  it("encodes each event type as prefix:JSON plus newline (exact bytes)", () => {
    expect(events.map(encodeLine).join("")).toMatchInlineSnapshot(`
      "0:"Hi \\"there\\"\\n"
      p:{"paymentId":"pay_1","status":"settled","service":{"url":"http://x/weather"},"amount":{"atomic":"10000","usd":"0.01"},"network":"eip155:31337","transaction":"0xabc"}
      e:{"code":"limit_exceeded","message":"over","limit":"daily"}
      d:{"finishReason":"payment-complete","transactionHash":"0xabc","transactions":["0xabc"],"payments":[{"paymentId":"pay_1","status":"settled","service":"http://x/weather","amountUsd":"0.01"}],"usage":{"inputTokens":3,"outputTokens":4,"totalTokens":7},"model":"aimodel-2.0-flash-exp","provider":"offline","modelId":"offline-1"}
      "
    `);
  });

  // Found by a black-box run: a hostile model's and a service's words reached clients with their escapes.
  it("sends no character that hides or reorders text or drives a terminal, from a model or a service", () => {
    const hostile = "\x1b[2J\x07\u202egnp.live\u202c";
    expect(encodeLine({ type: "text", text: `${hostile} \ud83d` })).toBe('0:"[2Jgnp.live \\ud83d"\n');
    const error = encodeLine({
      type: "error",
      error: { code: "service_refused", message: hostile, serviceSaid: hostile },
    });
    expect(error).toBe('e:{"code":"service_refused","message":"[2Jgnp.live","serviceSaid":"[2Jgnp.live"}\n');
  });

  it("frames a line as one SSE event (exact bytes)", () => {
    const first = events[0];
    if (!first) throw new Error("missing");
    expect(frame(encodeLine(first), "sse")).toBe('data: 0:"Hi \\"there\\"\\n"\n\n');
    expect(frame(encodeLine(first), "lines")).toBe('0:"Hi \\"there\\"\\n"\n');
  });

  it.each(["sse", "lines"] as const)(
    "round-trips every event through the %s framing, split at every byte",
    (framing) => {
      const wire = `${framing === "sse" ? ": ping\n\n" : ""}${events.map((e) => frame(encodeLine(e), framing)).join("")}`;
      for (const size of [1, 2, 7, 64, wire.length]) {
        const decoder = new StreamDecoder();
        const out: StreamEvent[] = [];
        for (let i = 0; i < wire.length; i += size) out.push(...decoder.push(wire.slice(i, i + size)));
        out.push(...decoder.end());
        expect(out).toEqual(events);
      }
    },
  );

  it("rejects malformed lines", () => {
    expect(() => decodeLine("x:1")).toThrow(ProtocolError);
    expect(() => decodeLine("0:not json")).toThrow(ProtocolError);
    expect(() => decodeLine("0:42")).toThrow(ProtocolError);
    expect(() => decodeLine('d:{"finishReason":"nope"}')).toThrow(ProtocolError);
    expect(() => decodeLine("hello")).toThrow(ProtocolError);
  });

  // A black-box review (h34): a schema's copy of an own "__proto__" key became the decoded
  // object's prototype, so its optional fields were read unchecked (a crash in the CLI).
  it("drops an own __proto__ key instead of reading fields through it", () => {
    const line = `d:{"__proto__":{"approvals":"oops"},${JSON.stringify(finish).slice(1)}`;
    const event = decodeLine(line);
    expect(event).toEqual({ type: "finish", finish });
    expect(event.type === "finish" && event.finish.approvals).toBeUndefined();
  });

  // A black-box review (h34): each chunk searched the whole held line again (16 MB in 16 KB
  // pieces: 13.7 s on the main thread), and a line that never ended was held until memory ran out.
  it("reads a long line fed in pieces once, and refuses one past the bound", () => {
    const decoder = new StreamDecoder();
    const text = "a".repeat(300_000);
    const line = `0:${JSON.stringify(text)}\n`;
    const events: StreamEvent[] = [];
    for (let i = 0; i < line.length; i += 1000) events.push(...decoder.push(line.slice(i, i + 1000)));
    expect(events).toEqual([{ type: "text", text }]);
    const endless = new StreamDecoder();
    const piece = "b".repeat(1_000_000);
    expect(() => {
      endless.push(`0:"${piece}`);
      for (let i = 0; i < 4; i++) endless.push(piece);
    }).toThrow(/a line longer than 4000000 characters/);
  });
});
