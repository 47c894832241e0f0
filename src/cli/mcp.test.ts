import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { buildService } from "../../test/helpers.js";
import { FakeFace } from "../mcp/testing/fake-face.js";
import { type BridgeIo, parseMcpArgs, runBridge } from "./mcp.js";

/** The stdio bridge, message for message, against the app (`app.request`, no socket, no process). */
const TOKEN = "token-for-alice-0123456789";
const WALLET = "0x2222222222222222222222222222222222222222";

function lines(stream: PassThrough): AsyncIterator<Record<string, unknown>> {
  let buffer = "";
  const queue: Array<Record<string, unknown>> = [];
  const waiters: Array<(v: IteratorResult<Record<string, unknown>>) => void> = [];
  stream.on("data", (chunk: Buffer) => {
    buffer += chunk.toString();
    for (let i = buffer.indexOf("\n"); i >= 0; i = buffer.indexOf("\n")) {
      const message = JSON.parse(buffer.slice(0, i)) as Record<string, unknown>;
      buffer = buffer.slice(i + 1);
      const w = waiters.shift();
      if (w) w({ value: message, done: false });
      else queue.push(message);
    }
  });
  return {
    next: () => {
      const m = queue.shift();
      return m ? Promise.resolve({ value: m, done: false }) : new Promise((resolve) => waiters.push(resolve));
    },
  };
}

/** The bridge to `http://service.test/mcp` through `fetch`, with its stdin and its stdout's messages. */
function bridgeTo(
  fetch: BridgeIo["fetch"],
  headers: Record<string, string> = {},
  renewToken?: () => string | undefined,
) {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const out = lines(stdout);
  const bridge = runBridge(
    { endpoint: new URL("http://service.test/mcp"), headers, ...(renewToken ? { renewToken } : {}) },
    { stdin, stdout, stderr: new PassThrough(), ...(fetch ? { fetch } : {}) },
  );
  return { stdin, out, bridge };
}

const INIT = { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "desk", version: "1" } };

/** The bridge to a service where alice's token pays from WALLET (the MCP face a fake one). */
function aliceBridge() {
  const { app } = buildService(
    { AUTH_TOKENS: `alice=${TOKEN}`, REQUIRE_AUTH: "true" },
    { mcp: { face: new FakeFace(), approvalUrl: (id) => `https://pay.example/approve/${id}` } },
  );
  return bridgeTo(async (url, init) => app.request(String(url), init), {
    Authorization: `Bearer ${TOKEN}`,
    "X-Wallet-Address": WALLET,
  });
}

/** Through the bridge: initialize (answered by this service), initialized, then get_budget; its answer. */
async function budgetThrough(stdin: PassThrough, out: AsyncIterator<Record<string, unknown>>) {
  const send = (message: unknown) => stdin.write(`${JSON.stringify(message)}\n`);
  send({
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "desk", version: "1" } },
  });
  expect((await out.next()).value).toMatchObject({
    id: 1,
    result: { serverInfo: { name: "x402-chat-agent" } },
  });
  send({ jsonrpc: "2.0", method: "notifications/initialized" });
  send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "get_budget", arguments: {} } });
  return (await out.next()).value;
}

describe("x402-chat-agent mcp (the stdio bridge)", () => {
  it("takes URL, token, wallet and limits from flags or the environment, as headers", () => {
    const options = parseMcpArgs(["--limits", '{"daily":"1"}'], {
      X402_CHAT_URL: "http://127.0.0.1:4000",
      X402_CHAT_TOKEN: TOKEN,
      X402_CHAT_WALLET: WALLET,
      DEVNET_MANIFEST: "/nonexistent",
    });
    expect(options).toEqual({
      endpoint: new URL("http://127.0.0.1:4000/mcp"),
      headers: {
        Authorization: `Bearer ${TOKEN}`,
        "X-Wallet-Address": WALLET,
        "X-Spending-Limits": '{"daily":"1"}',
      },
    });
    expect(() => parseMcpArgs(["--limits", "{nope"], {})).toThrow(/JSON/);
    expect(() => parseMcpArgs(["pay", "now"], {})).toThrow(/no words/);
  });

  it("forwards initialize and a tool call to /mcp and the answers back, with the session's headers", async () => {
    const face = new FakeFace();
    const { app } = buildService(
      { AUTH_TOKENS: `alice=${TOKEN}`, REQUIRE_AUTH: "true" },
      { mcp: { face, approvalUrl: (id) => `https://pay.example/approve/${id}` } },
    );
    const { stdin, out, bridge } = bridgeTo(async (url, init) => app.request(String(url), init), {
      Authorization: `Bearer ${TOKEN}`,
      "X-Wallet-Address": WALLET,
    });
    const budget = await budgetThrough(stdin, out);
    expect(budget).toMatchObject({ id: 2, result: { structuredContent: { wallet: WALLET } } });
    expect(face.sessions[0]).toMatchObject({ caller: "alice", scopeId: expect.stringMatching(/^mcp_/) });
    stdin.end();
    await bridge;
  });

  // Found by a black-box run: lines piped without waiting for initialize's answer were refused.
  it("holds what a client sends before initialize is answered, then sends it in order", async () => {
    const { stdin, out, bridge } = aliceBridge();
    stdin.write(
      [
        { jsonrpc: "2.0", id: 1, method: "initialize", params: INIT },
        { jsonrpc: "2.0", method: "notifications/initialized" },
        { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "get_budget", arguments: {} } },
        { jsonrpc: "2.0", id: 3, method: "ping" },
      ]
        .map((m) => `${JSON.stringify(m)}\n`)
        .join(""),
    );
    const answers = [(await out.next()).value, (await out.next()).value, (await out.next()).value];
    // Answers come as they are ready (a ping before a tool call's); none is an error.
    // (A second initialize piped at once is below.)
    const byId = new Map(answers.map((a) => [a?.id, a]));
    expect(answers[0]?.id).toBe(1);
    expect([...byId.keys()].sort()).toEqual([1, 2, 3]);
    expect(byId.get(2)).toMatchObject({ result: { structuredContent: { wallet: WALLET } } });
    expect(byId.get(3)).toMatchObject({ result: {} });
    stdin.end();
    await bridge;
  });

  // Found by a re-test: a second initialize piped before the first was answered stopped every line
  // between them for good.
  it("answers every line when a second initialize is piped before the first is answered", async () => {
    const { stdin, out, bridge } = aliceBridge();
    const lines = [
      { jsonrpc: "2.0", id: 1, method: "initialize", params: INIT },
      { jsonrpc: "2.0", id: 2, method: "ping" },
      { jsonrpc: "2.0", id: 3, method: "initialize", params: INIT },
      { jsonrpc: "2.0", id: 4, method: "ping" },
    ];
    stdin.write(lines.map((m) => `${JSON.stringify(m)}\n`).join(""));
    const ids = [];
    for (let i = 0; i < lines.length; i++) ids.push((await out.next()).value?.id);
    expect(ids.sort()).toEqual([1, 2, 3, 4]);
    stdin.end();
    await bridge;
  });

  /*
   * Found by a black-box run: the service killed while pay_quote settled, the bridge only wrote
   * "SSE stream disconnected" to stderr and the client waited for its own 60 s timeout.
   */
  it("answers a request whose answer stream broke off with an error saying what to check", async () => {
    const { app } = buildService(
      { AUTH_TOKENS: `alice=${TOKEN}`, REQUIRE_AUTH: "true" },
      { mcp: { face: new FakeFace(), approvalUrl: (id) => id } },
    );
    const cut = (): Response => {
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new TextEncoder().encode(": working\n\n"));
          queueMicrotask(() => controller.error(new TypeError("terminated")));
        },
      });
      return new Response(body, { headers: { "content-type": "text/event-stream" } });
    };
    const { stdin, out, bridge } = bridgeTo(
      async (url, init) =>
        String(init?.body).includes("tools/call") ? cut() : app.request(String(url), init),
      { Authorization: `Bearer ${TOKEN}` },
    );
    const send = (message: unknown) => stdin.write(`${JSON.stringify(message)}\n`);
    send({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "d", version: "1" } },
    });
    expect((await out.next()).value).toMatchObject({ id: 1, result: {} });
    send({ jsonrpc: "2.0", method: "notifications/initialized" });
    send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "pay_quote", arguments: {} } });
    const answer = (await out.next()).value as { id: number; error: { message: string } };
    expect(answer.id).toBe(2);
    expect(answer.error.message).toMatch(/broke off before its answer.*get_payment or list_payments/);
    stdin.end();
    await bridge;
  });

  it("answers a line that is not one JSON-RPC message with an error, id null, on stdout", async () => {
    const { stdin, out, bridge } = bridgeTo(async () => new Response(null, { status: 500 }));
    stdin.write(`not json\nnull\n[{"jsonrpc":"2.0","id":1,"method":"ping"}]\n`);
    const codes = [];
    for (let i = 0; i < 3; i++) {
      const answer = (await out.next()).value as { id: unknown; error: { code: number } };
      expect(answer.id).toBeNull();
      codes.push(answer.error.code);
    }
    expect(codes).toEqual([-32700, -32600, -32600]);
    stdin.end();
    await bridge;
  });

  // Found by a fuzzing run: the SDK refused these with id null, and the client waited on its id.
  it("answers a JSON object that is not a valid message but names its id with that id", async () => {
    const { stdin, out, bridge } = bridgeTo(async () => new Response(null, { status: 500 }));
    stdin.write(
      [
        `{"jsonrpc":"2.0","id":13,"method":"ping","extra":1}`,
        `{"jsonrpc":"2.0","id":"s","method":"ping","__proto__":{}}`,
        `{"jsonrpc":"2.0","id":11.5,"method":"ping"}`,
        `{"jsonrpc":"1.0","id":14,"method":"ping"}`,
        `not json`,
        "",
      ].join("\n"),
    );
    const answers = [];
    for (let i = 0; i < 5; i++)
      answers.push((await out.next()).value as { id: unknown; error: { code: number } });
    expect(answers.map((a) => [a.id, a.error.code])).toEqual([
      [13, -32600],
      ["s", -32600],
      [11.5, -32600],
      [14, -32600],
      [null, -32700],
    ]);
    stdin.end();
    await bridge;
  });

  it("answers a request the service refused with a JSON-RPC error, not silence", async () => {
    const { app } = buildService(
      { AUTH_TOKENS: `alice=${TOKEN}`, REQUIRE_AUTH: "true" },
      { mcp: { face: new FakeFace(), approvalUrl: (id) => id } },
    );
    const { stdin, out, bridge } = bridgeTo(async (url, init) => app.request(String(url), init));
    stdin.write(
      `${JSON.stringify({ jsonrpc: "2.0", id: 7, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "d", version: "1" } } })}\n`,
    );
    const answer = (await out.next()).value as { id: number; error: { message: string } };
    expect(answer.id).toBe(7);
    expect(answer.error.message).toContain("401");
    stdin.end();
    await bridge;
  });

  it("--devnet: after the service restarted with a new dev token, a 401 is sent again with it", async () => {
    const NEW = "token-after-restart-0123456789";
    const { app } = buildService(
      { AUTH_TOKENS: `alice=${NEW}`, REQUIRE_AUTH: "true" },
      { mcp: { face: new FakeFace(), approvalUrl: (id) => id } },
    );
    const sent: Array<string | null> = [];
    const { stdin, out, bridge } = bridgeTo(
      async (url, init) => {
        sent.push(new Headers(init?.headers).get("authorization"));
        return app.request(String(url), init);
      },
      { Authorization: `Bearer ${TOKEN}`, "X-Wallet-Address": WALLET },
      () => NEW, // the manifest as the restarted devnet wrote it
    );
    expect(await budgetThrough(stdin, out)).toMatchObject({
      id: 2,
      result: { structuredContent: { wallet: WALLET } },
    });
    // The old token once, then only the new one.
    expect(sent[0]).toBe(`Bearer ${TOKEN}`);
    expect(sent.slice(1).every((a) => a === `Bearer ${NEW}`)).toBe(true);
    stdin.end();
    await bridge;
  });

  it("names the URL and what to do when the service is not running", async () => {
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    let said = "";
    stderr.on("data", (chunk: Buffer) => {
      said += chunk.toString();
    });
    const out = lines(stdout);
    const refused = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:3999"), { code: "ECONNREFUSED" });
    const bridge = runBridge(
      { endpoint: new URL("http://127.0.0.1:3999/mcp"), headers: {} },
      {
        stdin,
        stdout,
        stderr,
        fetch: async () => {
          throw new TypeError("fetch failed", { cause: refused });
        },
      },
    );
    stdin.write(
      `${JSON.stringify({ jsonrpc: "2.0", id: 3, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "d", version: "1" } } })}\n`,
    );
    const answer = (await out.next()).value as { id: number; error: { message: string } };
    expect(answer.id).toBe(3);
    expect(answer.error.message).toContain(
      "cannot reach the service at http://127.0.0.1:3999/mcp (ECONNREFUSED)",
    );
    expect(answer.error.message).toMatch(/npm start.*--url or \$X402_CHAT_URL/);
    expect(said).toContain("http://127.0.0.1:3999/mcp");
    expect(said).not.toMatch(/: fetch failed\n/);
    expect(said.split("\n").filter((l) => l.includes("cannot reach"))).toHaveLength(1); // said once
    stdin.end();
    await bridge;
  });

  it("passes a 2026-07-28 request through with the headers that revision requires", async () => {
    const { app } = buildService(
      { AUTH_TOKENS: `alice=${TOKEN}` },
      { mcp: { face: new FakeFace(), approvalUrl: (id) => id } },
    );
    const { stdin, out, bridge } = bridgeTo(async (url, init) => app.request(String(url), init), {
      Authorization: `Bearer ${TOKEN}`,
    });
    const _meta = {
      "io.modelcontextprotocol/protocolVersion": "2026-07-28",
      "io.modelcontextprotocol/clientCapabilities": {},
      "io.modelcontextprotocol/clientInfo": { name: "d", version: "1" },
    };
    stdin.write(
      `${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "server/discover", params: { _meta } })}\n`,
    );
    const discovered = (await out.next()).value as { result: { supportedVersions: string[] } };
    expect(discovered.result.supportedVersions).toContain("2026-07-28");
    stdin.write(
      `${JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "get_budget", arguments: {}, _meta } })}\n`,
    );
    const called = (await out.next()).value as { result: { resultType: string; isError?: boolean } };
    expect(called.result).toMatchObject({ resultType: "complete" });
    expect(called.result.isError).toBeFalsy();
    stdin.end();
    await bridge;
  });
});
