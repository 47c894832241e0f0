import { describe, expect, it } from "vitest";
import { REQUEST_BOUNDS } from "../src/protocol/index.js";
import { buildService, chatRequest } from "./helpers.js";

const { app } = buildService();
const EVM = "0x52908400098527886E0F7030069857D2E4169EE7"; // EIP-55 test vector
const SOL = "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM";
const user = (content: string) => ({ role: "user", content });

async function problem(init: RequestInit) {
  const res = await app.request("/api/chat", init);
  const text = await res.text();
  return { status: res.status, type: res.headers.get("content-type"), body: text ? JSON.parse(text) : null };
}

type Case = [name: string, init: RequestInit, status: number, code: string];

const cases: Case[] = [
  ["malformed JSON", chatRequest('{"messages": ['), 400, "invalid_json"],
  ["empty body", chatRequest(""), 400, "invalid_json"],
  [
    "invalid UTF-8",
    {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: new Uint8Array([0x7b, 0xff, 0x7d]),
    },
    400,
    "invalid_json",
  ],
  [
    "wrong content type",
    { method: "POST", headers: { "Content-Type": "text/plain" }, body: "{}" },
    415,
    "unsupported_media_type",
  ],
  [
    "no content type",
    { method: "POST", body: JSON.stringify({ messages: [user("hi")] }) },
    415,
    "unsupported_media_type",
  ],
  [
    "non-UTF-8 charset",
    chatRequest({ messages: [user("hi")] }, { "Content-Type": "application/json; charset=latin1" }),
    415,
    "unsupported_media_type",
  ],
  // Found by fuzzing (h49): only the first charset was read, and an empty one passed.
  [
    "a second charset, not UTF-8",
    chatRequest(
      { messages: [user("hi")] },
      { "Content-Type": "application/json; charset=utf-8; charset=latin1" },
    ),
    415,
    "unsupported_media_type",
  ],
  [
    "an empty charset",
    chatRequest({ messages: [user("hi")] }, { "Content-Type": "application/json; charset=" }),
    415,
    "unsupported_media_type",
  ],
  [
    "a compressed body (Content-Encoding)",
    chatRequest(JSON.stringify({ messages: [user("hi")] }), { "Content-Encoding": "gzip" }),
    415,
    "unsupported_media_type",
  ],
  [
    "body too large",
    chatRequest({ messages: [user("x".repeat(REQUEST_BOUNDS.maxBodyBytes))] }),
    413,
    "payload_too_large",
  ],
  ["array body", chatRequest([1, 2]), 400, "invalid_request"],
  ["no messages field", chatRequest({}), 400, "invalid_request"],
  ["empty messages", chatRequest({ messages: [] }), 400, "invalid_request"],
  ["messages wrong type", chatRequest({ messages: "hi" }), 400, "invalid_request"],
  ["unknown role", chatRequest({ messages: [{ role: "tool", content: "x" }] }), 400, "invalid_request"],
  ["content not a string", chatRequest({ messages: [{ role: "user", content: 5 }] }), 400, "invalid_request"],
  [
    "unknown top-level field",
    chatRequest({ messages: [user("hi")], temprature: 0.2 }),
    400,
    "invalid_request",
  ],
  ["empty last message", chatRequest({ messages: [user("   ")] }), 400, "invalid_request"],
  [
    "last message not from user",
    chatRequest({ messages: [user("hi"), { role: "assistant", content: "yo" }] }),
    400,
    "invalid_request",
  ],
  [
    "too many messages",
    chatRequest({ messages: Array.from({ length: REQUEST_BOUNDS.maxMessages + 1 }, () => user("a")) }),
    400,
    "invalid_request",
  ],
  [
    "message too long",
    chatRequest({ messages: [user("a".repeat(REQUEST_BOUNDS.maxMessageChars + 1))] }),
    400,
    "invalid_request",
  ],
  [
    "too many characters in all",
    chatRequest({ messages: Array.from({ length: 5 }, () => user("a".repeat(15_000))) }),
    400,
    "invalid_request",
  ],
  ["control character", chatRequest({ messages: [user("hi\u0007there")] }), 400, "unsafe_content"],
  ["bidi override", chatRequest({ messages: [user("pay \u202Eevil")] }), 400, "unsafe_content"],
  [
    "unicode tag characters",
    chatRequest({ messages: [user("hi \u{E0041}\u{E0042}")] }),
    400,
    "unsafe_content",
  ],
  [
    "lone surrogate",
    chatRequest(`{"messages":[{"role":"user","content":"a\\ud800b"}]}`),
    400,
    "unsafe_content",
  ],
  ["unknown model", chatRequest({ messages: [user("hi")], model: "gpt-4" }), 400, "invalid_request"],
  ["temperature above 1", chatRequest({ messages: [user("hi")], temperature: 1.5 }), 400, "invalid_request"],
  [
    "temperature as string",
    chatRequest({ messages: [user("hi")], temperature: "0.5" }),
    400,
    "invalid_request",
  ],
  ["maxTokens 0", chatRequest({ messages: [user("hi")], maxTokens: 0 }), 400, "invalid_request"],
  ["maxTokens above 8000", chatRequest({ messages: [user("hi")], maxTokens: 8001 }), 400, "invalid_request"],
  ["maxTokens fractional", chatRequest({ messages: [user("hi")], maxTokens: 10.5 }), 400, "invalid_request"],
  [
    "EVM wallet too short",
    chatRequest({ messages: [user("hi")], walletAddress: "0x1234" }),
    400,
    "invalid_wallet",
  ],
  [
    "EVM wallet bad checksum (one letter flipped)",
    chatRequest({ messages: [user("hi")], walletAddress: EVM.replace("E0F", "e0F") }),
    400,
    "invalid_wallet",
  ],
  [
    "EVM wallet not hex",
    chatRequest({ messages: [user("hi")], walletAddress: `0x${"g".repeat(40)}` }),
    400,
    "invalid_wallet",
  ],
  [
    "Solana wallet 31 bytes",
    chatRequest({ messages: [user("hi")], walletAddress: "1111111111111111111111111111111" }),
    400,
    "invalid_wallet",
  ],
  [
    "Solana wallet off curve (a PDA)",
    chatRequest({
      messages: [user("hi")],
      walletAddress:
        "Bn7YFE9AfLoTTQA4TYS1KahaaNftZ6SZwmCegi2PqdY7" /* PDA of the token program, seed "x402-test" */,
    }),
    400,
    "invalid_wallet",
  ],
  ["wallet not a string", chatRequest({ messages: [user("hi")], walletAddress: 42 }), 400, "invalid_wallet"],
  [
    "limits without wallet",
    chatRequest({ messages: [user("hi")], spendingLimits: { daily: "1" } }),
    400,
    "invalid_limits",
  ],
  [
    "negative limit",
    chatRequest({ messages: [user("hi")], walletAddress: EVM, spendingLimits: { daily: "-1" } }),
    400,
    "invalid_limits",
  ],
  [
    "exponent limit",
    chatRequest({ messages: [user("hi")], walletAddress: EVM, spendingLimits: { daily: "1e3" } }),
    400,
    "invalid_limits",
  ],
  [
    "7 decimals",
    chatRequest({
      messages: [user("hi")],
      walletAddress: EVM,
      spendingLimits: { perTransaction: "0.0000001" },
    }),
    400,
    "invalid_limits",
  ],
  [
    "number needing an exponent",
    chatRequest({ messages: [user("hi")], walletAddress: EVM, spendingLimits: { perTransaction: 1e-7 } }),
    400,
    "invalid_limits",
  ],
  // Found by a black-box run: a number was read as the float it rounds to, not as it was written.
  ...(["1e3", "-0", "1.0000000000000001", "999999.99999999999999", "5e-1"] as const).map(
    (written): Case => [
      `limit written as the JSON number ${written}`,
      chatRequest(
        `{"messages":[{"role":"user","content":"hi"}],"walletAddress":"${EVM}","spendingLimits":{"perTransaction":${written}}}`,
      ),
      400,
      "invalid_limits",
    ],
  ),
  [
    "huge limit",
    chatRequest({ messages: [user("hi")], walletAddress: EVM, spendingLimits: { daily: "99999999999" } }),
    400,
    "invalid_limits",
  ],
  [
    "unknown limit field",
    chatRequest({ messages: [user("hi")], walletAddress: EVM, spendingLimits: { perTx: "1" } }),
    400,
    "invalid_limits",
  ],
  [
    "bad network id",
    chatRequest({
      messages: [user("hi")],
      walletAddress: EVM,
      spendingLimits: { allowedNetworks: ["base"] },
    }),
    400,
    "invalid_limits",
  ],
  [
    "bad service origin",
    chatRequest({
      messages: [user("hi")],
      walletAddress: EVM,
      spendingLimits: { allowedServices: ["ftp://x"] },
    }),
    400,
    "invalid_limits",
  ],
  // Each would allow the whole origin while reading as narrower: refused, not widened.
  ...["https://api.example.com/weather", "https://u:p@api.example.com", "https://api.example.com/?a=1"].map(
    (service): Case => [
      `service ${service} is not an origin`,
      chatRequest({
        messages: [user("hi")],
        walletAddress: EVM,
        spendingLimits: { allowedServices: [service] },
      }),
      400,
      "invalid_limits",
    ],
  ),
];

describe("request validation", () => {
  it.each(cases)("%s -> %i %s", async (_name, init, status, code) => {
    const res = await problem(init);
    expect(res.status).toBe(status);
    expect(res.type).toBe("application/problem+json");
    expect(res.body).toMatchObject({ status, code, title: expect.any(String), detail: expect.any(String) });
    expect(res.body.type).toMatch(/^https:\/\//);
  });

  it("lists every field error in RFC 9457 extension members", async () => {
    const res = await problem(chatRequest({ messages: [{ role: "bot", content: 1 }], temperature: 3 }));
    expect(res.status).toBe(400);
    const paths = res.body.errors.map((e: { path: string }) => e.path);
    expect(paths).toEqual(expect.arrayContaining(["messages.0.role", "messages.0.content", "temperature"]));
  });

  // Found by a review: 240 KB of bad messages got a 10 MB answer, a field problem per element.
  it("answers a body with very many bad parts with a bounded list, before reading each one", async () => {
    const many = `{"messages":[${Array(120_000).fill("1").join(",")}]}`;
    const res = await problem(chatRequest(many));
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([
      { path: "messages", message: `must hold at most ${REQUEST_BOUNDS.maxMessages} messages` },
    ]);
    const bad = Array.from({ length: 60 }, (_, i) => ({ role: "bot", content: i }));
    const listed = await problem(chatRequest({ messages: bad, ["x".repeat(5000)]: 1 }));
    expect(listed.body.errors.length).toBe(21);
    expect(listed.body.errors.at(-1).message).toMatch(/^\d+ more problems not listed$/);
    expect(JSON.stringify(listed.body).length).toBeLessThan(8000);
  });

  it.each([
    ["temperature", '{"messages":[{"role":"user","content":"hi"}],"temperature":1e400}'],
    ["maxTokens", '{"messages":[{"role":"user","content":"hi"}],"maxTokens":-1e400}'],
  ])("says a %s that JSON makes infinite must be a finite number", async (field, body) => {
    const res = await problem(chatRequest(body));
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ path: field, message: "must be a finite number" }]);
  });

  it.each([
    ["lower-case EVM", EVM.toLowerCase()],
    ["checksummed EVM", EVM],
    ["Solana", SOL],
  ])("accepts a %s wallet with limits in dollars and atomic-safe decimals", async (_n, wallet) => {
    const res = await app.request(
      "/api/chat",
      chatRequest({
        messages: [{ role: "system", content: "be brief" }, user("hi")],
        walletAddress: wallet,
        spendingLimits: {
          perTransaction: "0.25",
          perRequest: 1,
          daily: "10.123456",
          allowedNetworks: ["eip155:8453"],
        },
        model: "aimodel-1.5-pro",
        temperature: 0,
        maxTokens: 1000,
      }),
    );
    expect(res.status).toBe(200);
    await res.text();
  });

  it("answers unknown routes and methods with problem+json", async () => {
    const notFound = await app.request("/nope");
    expect(notFound.status).toBe(404);
    expect((await notFound.json()).code).toBe("not_found");
    const wrongMethod = await app.request("/api/chat");
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get("allow")).toBe("POST");
    // Found by a black-box run: another method on a path that is served was 404, as if unknown.
    for (const [path, method, allow] of [
      ["/healthz", "POST", "GET, HEAD"],
      ["/readyz", "DELETE", "GET, HEAD"],
      // The page's own paths (found by a fuzzing run: 404 with no Allow).
      ["/", "POST", "GET, HEAD"],
      ["/operator", "DELETE", "GET, HEAD"],
      ["/approve/pay_123", "PUT", "GET, HEAD"],
    ] as const) {
      const res = await app.request(path, { method });
      expect(res.status, `${method} ${path}`).toBe(405);
      expect(res.headers.get("allow")).toBe(allow);
      expect(res.headers.get("content-type")).toBe("application/problem+json");
      expect((await res.json()).code).toBe("method_not_allowed");
    }
    // A path nobody serves stays 404 whatever the method, though the page answers every GET.
    expect((await app.request("/nope", { method: "POST" })).status).toBe(404);
  });
});
