import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  type CallToolResult,
  type ClientCapabilities,
  ElicitRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import type { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { buildService } from "../../test/helpers.js";
import { awaitingView, FakeFace, PAYMENT_ID } from "../mcp/testing/fake-face.js";

/**
 * `POST /mcp` through the app (`app.request`, no socket), with the SDK's own client over
 * Streamable HTTP: auth, the session's headers, the stateless session id, the rate limit.
 */
const TOKEN = "token-for-alice-0123456789";
const WALLET = "0x2222222222222222222222222222222222222222";
const approvalUrl = (id: string) => `https://pay.example/approve/${id}`;

function service(env: Record<string, string> = {}) {
  const face = new FakeFace();
  const { app } = buildService({ AUTH_TOKENS: `alice=${TOKEN}`, ...env }, { mcp: { face, approvalUrl } });
  return { face, app };
}

async function connect(app: Hono, headers: Record<string, string>, capabilities: ClientCapabilities = {}) {
  const transport = new StreamableHTTPClientTransport(new URL("http://service.test/mcp"), {
    requestInit: { headers },
    fetch: async (url, init) => app.request(String(url), init),
  });
  const client = new Client({ name: "test", version: "1" }, { capabilities });
  await client.connect(transport);
  return { client, transport };
}

function post(headers: Record<string, string>, body: unknown = { jsonrpc: "2.0", id: 1, method: "ping" }) {
  return {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      Accept: "application/json, text/event-stream",
      ...headers,
    },
    body: JSON.stringify(body),
  };
}

describe("POST /mcp", () => {
  it("serves the tools to a bearer caller, with the wallet and limits its headers set", async () => {
    const { face, app } = service();
    const { client, transport } = await connect(app, {
      Authorization: `Bearer ${TOKEN}`,
      "X-Wallet-Address": WALLET,
      "X-Spending-Limits": JSON.stringify({ perRequest: "0.5", daily: "2" }),
    });
    expect(transport.sessionId).toMatch(/^mcp_[0-9a-f-]{36}$/);
    const result = (await client.callTool({
      name: "pay_quote",
      arguments: { quoteId: "qt_1" },
    })) as CallToolResult;
    expect(result.isError).toBeFalsy();
    const seen = face.sessions[0];
    expect(seen).toMatchObject({ caller: "alice", bearerToken: TOKEN, scopeId: transport.sessionId });
    expect(seen?.wallet?.address).toBe(WALLET);
    expect(seen?.spendingLimits).toEqual({ perRequest: 500_000n, daily: 2_000_000n });
    await client.close();
  });

  it("refuses a missing token, a bad wallet and bad limits with 400/401 problem+json", async () => {
    const { app } = service({ REQUIRE_AUTH: "true" });
    const noToken = await app.request("/mcp", post({}));
    expect(noToken.status).toBe(401);
    expect(noToken.headers.get("content-type")).toContain("application/problem+json");

    const auth = { Authorization: `Bearer ${TOKEN}` };
    const badWallet = await app.request("/mcp", post({ ...auth, "X-Wallet-Address": "0x123" }));
    expect(badWallet.status).toBe(400);
    expect((await badWallet.json()).code).toBe("invalid_wallet");

    for (const limits of ["{not json", JSON.stringify({ daily: "-1" }), JSON.stringify({ raise: "9" })]) {
      const res = await app.request(
        "/mcp",
        post({ ...auth, "X-Wallet-Address": WALLET, "X-Spending-Limits": limits }),
      );
      expect(res.status, limits).toBe(400);
      expect((await res.json()).code, limits).toBe("invalid_limits");
    }
    const limitsWithoutWallet = await app.request(
      "/mcp",
      post({ ...auth, "X-Spending-Limits": JSON.stringify({ daily: "1" }) }),
    );
    expect((await limitsWithoutWallet.json()).code).toBe("invalid_limits");
  });

  // Found by fuzzing: these came back in the SDK's JSON-RPC shape, no problem+json, no stable code.
  it("refuses a body that is not JSON (415) and an Accept it cannot answer (406) as problem+json", async () => {
    const { app } = service();
    const auth = { Authorization: `Bearer ${TOKEN}` };
    for (const [headers, status, code] of [
      [{ "Content-Type": "text/plain" }, 415, "unsupported_media_type"],
      [{ "Content-Type": "" }, 415, "unsupported_media_type"],
      [{ "Content-Type": "application/json; charset=latin1" }, 415, "unsupported_media_type"],
      [{ "Content-Type": "application/vnd.x+json" }, 415, "unsupported_media_type"],
      [{ Accept: "application/jsonx, text/event-streamy" }, 406, "not_acceptable"],
      [{ Accept: "application/json" }, 406, "not_acceptable"],
      [{ Accept: "text/event-stream" }, 406, "not_acceptable"],
      [{ Accept: "" }, 406, "not_acceptable"],
    ] as const) {
      const res = await app.request("/mcp", post({ ...auth, ...headers }));
      expect(res.status, JSON.stringify(headers)).toBe(status);
      expect(res.headers.get("content-type")).toBe("application/problem+json");
      expect((await res.json()).code).toBe(code);
    }
    // Media types compare as types: any case, and a wildcard takes both answers.
    for (const accept of ["Application/JSON, Text/Event-Stream", "*/*", "application/*, text/*;q=0.5"]) {
      const init = {
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "1" } },
      };
      const res = await app.request("/mcp", post({ ...auth, Accept: accept }, init));
      expect(res.status, accept).toBe(200);
      expect(await res.text(), accept).toContain('"protocolVersion":"2025-11-25"');
    }
  });

  // Found by a black-box run: an empty batch got the SDK's JSON-RPC 400, not problem+json.
  it("refuses an empty batch as problem+json, on either revision", async () => {
    const { app } = service();
    for (const version of [undefined, "2026-07-28"]) {
      const headers = {
        Authorization: `Bearer ${TOKEN}`,
        ...(version ? { "MCP-Protocol-Version": version } : {}),
      };
      const res = await app.request("/mcp", post(headers, []));
      expect(res.status, version).toBe(400);
      expect(res.headers.get("content-type"), version).toBe("application/problem+json");
      expect((await res.json()).code, version).toBe("invalid_request");
    }
  });

  // Found by a black-box run: the SDK's Connection: keep-alive held a client that said close ~6 s.
  it("leaves the connection to the request: no forced keep-alive on its stream", async () => {
    const { app } = service();
    const init = {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "1" } },
    };
    const res = await app.request(
      "/mcp",
      post({ Authorization: `Bearer ${TOKEN}`, Connection: "close" }, init),
    );
    expect(res.status).toBe(200);
    expect(res.headers.get("connection")).toBeNull();
    await res.text();
  });

  it("refuses a request without the session id it gave, and GET with 405", async () => {
    const { app } = service();
    const auth = { Authorization: `Bearer ${TOKEN}` };
    const noSession = await app.request("/mcp", post(auth));
    expect(noSession.status).toBe(400);
    expect(await noSession.json()).toMatchObject({ code: "invalid_request", detail: /Mcp-Session-Id/ });
    // A malformed initialize is told what is wrong with it, not asked for a session id.
    for (const params of [undefined, { protocolVersion: "2025-11-25", capabilities: null }]) {
      const init = { jsonrpc: "2.0", id: 1, method: "initialize", ...(params ? { params } : {}) };
      const bad = await app.request("/mcp", post(auth, init));
      expect(bad.status).toBe(400);
      expect((await bad.json()).detail).toMatch(/initialize is malformed/);
    }
    const get = await app.request("/mcp", { headers: auth });
    expect(get.status).toBe(405);
    expect(get.headers.get("allow")).toBe("POST");
  });

  it("refuses a page of another origin (DNS rebinding), not a loopback page or a listed one", async () => {
    const { app } = service({ CORS_ORIGINS: "https://app.example.com" });
    const auth = { Authorization: `Bearer ${TOKEN}` };
    const rebound = await app.request("/mcp", post({ ...auth, Origin: "http://evil.example:3000" }));
    expect(rebound.status).toBe(401);
    expect((await rebound.json()).code).toBe("unauthorized");
    for (const origin of ["http://localhost:5173", "http://127.0.0.1:3000", "https://app.example.com"]) {
      const res = await app.request("/mcp", post({ ...auth, Origin: origin }));
      expect(res.status, origin).toBe(400); // past the origin check: no session id
    }
  });

  it("counts a session's tool calls against the caller's rate limit, not its handshake or notifications", async () => {
    // What one agent session sends, measured with the SDK's client: initialize, the initialized
    // notification and tools/list (free), then one POST per tool call (counted).
    const { app } = service({ RATE_LIMIT_POINTS: "4" });
    const posts: { method: string; status: number }[] = [];
    const transport = new StreamableHTTPClientTransport(new URL("http://service.test/mcp"), {
      requestInit: { headers: { Authorization: `Bearer ${TOKEN}`, "X-Wallet-Address": WALLET } },
      fetch: async (url, init) => {
        const response = await app.request(String(url), init);
        if (init?.method === "POST") {
          const body = JSON.parse(String(init.body)) as { method?: string };
          posts.push({ method: body.method ?? "response", status: response.status });
        }
        return response;
      },
    });
    const client = new Client({ name: "agent", version: "1" });
    await client.connect(transport);
    await client.listTools();
    await client.callTool({ name: "find_services", arguments: { query: "weather" } });
    await client.callTool({ name: "get_quote", arguments: { url: "https://weather.example/now" } });
    await client.callTool({ name: "pay_quote", arguments: { quoteId: "qt_1" } });
    await client.callTool({ name: "get_payment", arguments: { paymentId: PAYMENT_ID } });
    expect(posts.map((p) => p.method)).toEqual([
      "initialize",
      "notifications/initialized",
      "tools/list",
      "tools/call",
      "tools/call",
      "tools/call",
      "tools/call",
    ]);
    expect(posts.every((p) => p.status < 300)).toBe(true);
    // Four tool calls used the quota of four: the fifth is refused, a ping still answered.
    const auth = { Authorization: `Bearer ${TOKEN}`, "Mcp-Session-Id": transport.sessionId ?? "" };
    const call = {
      jsonrpc: "2.0",
      id: 9,
      method: "tools/call",
      params: { name: "get_budget", arguments: {} },
    };
    const limited = await app.request("/mcp", post(auth, call));
    expect(limited.status).toBe(429);
    expect((await limited.json()).code).toBe("rate_limited");
    expect((await app.request("/mcp", post(auth))).status).toBe(200);
    await client.close();
  });

  it("refuses a batch of requests in one POST (the rate limit counts POSTs), and calls nothing", async () => {
    const { face, app } = service();
    const auth = {
      Authorization: `Bearer ${TOKEN}`,
      "Mcp-Session-Id": `mcp_${"0".repeat(8)}-0000-4000-8000-${"0".repeat(12)}`,
    };
    const pay = (id: number) => ({
      jsonrpc: "2.0",
      id,
      method: "tools/call",
      params: { name: "pay_quote", arguments: { quoteId: `qt_${id}` } },
    });
    const batch = await app.request("/mcp", post(auth, [pay(1), pay(2), pay(3)]));
    expect(batch.status).toBe(400);
    expect((await batch.json()).code).toBe("invalid_request");
    expect(face.paid).toEqual([]);
    // One request with a notification beside it is still one request.
    const one = await app.request(
      "/mcp",
      post(auth, [pay(4), { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 0 } }]),
    );
    expect(one.status).toBe(200);
  });

  it("marks a session whose client declared URL elicitation, and only that one", async () => {
    const { app } = service();
    const init = (capabilities: Record<string, unknown>) =>
      app.request(
        "/mcp",
        post(
          { Authorization: `Bearer ${TOKEN}` },
          {
            jsonrpc: "2.0",
            id: 0,
            method: "initialize",
            params: { protocolVersion: "2025-11-25", capabilities, clientInfo: { name: "t", version: "1" } },
          },
        ),
      );
    expect((await init({ elicitation: { url: {} } })).headers.get("mcp-session-id")).toMatch(/\.url$/);
    expect((await init({ elicitation: { form: {} } })).headers.get("mcp-session-id")).not.toMatch(/\.url$/);
  });

  it("sends a URL elicitation on the tool call's own stream and returns the payment once settled", async () => {
    const { face, app } = service();
    const expires = new Date(Date.now() + 300_000).toISOString();
    face.payAnswer = () => ({
      status: "awaiting_approval",
      paymentId: PAYMENT_ID,
      approvalExpiresAt: expires,
    });
    face.payments.set(PAYMENT_ID, awaitingView(expires));
    const { client } = await connect(app, { Authorization: `Bearer ${TOKEN}` }, { elicitation: { url: {} } });
    const asked: string[] = [];
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(String((request.params as { url?: string }).url));
      face.payments.set(PAYMENT_ID, { ...awaitingView(expires), status: "settled", transaction: "0xabc" });
      return { action: "accept" };
    });
    const result = (await client.callTool({
      name: "pay_quote",
      arguments: { quoteId: "qt_1" },
    })) as CallToolResult;
    expect(asked).toEqual([approvalUrl(PAYMENT_ID)]);
    expect(result.structuredContent).toMatchObject({ status: "settled", transaction: "0xabc" });
    await client.close();
  });

  it("a declined elicitation, answered on a later request, ends the waiting call with the approval URL", async () => {
    const { face, app } = service();
    const expires = new Date(Date.now() + 300_000).toISOString();
    face.payAnswer = () => ({
      status: "awaiting_approval",
      paymentId: PAYMENT_ID,
      approvalExpiresAt: expires,
    });
    face.payments.set(PAYMENT_ID, awaitingView(expires));
    const { client } = await connect(app, { Authorization: `Bearer ${TOKEN}` }, { elicitation: { url: {} } });
    client.setRequestHandler(ElicitRequestSchema, async () => ({ action: "decline" }));
    // Without the answer reaching the call, it would wait the approval's 5 minutes (the test's 10 s).
    const result = (await client.callTool({
      name: "pay_quote",
      arguments: { quoteId: "qt_1" },
    })) as CallToolResult;
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({
      status: "awaiting_approval",
      approvalUrl: approvalUrl(PAYMENT_ID),
    });
    await client.close();
  });

  // A black-box review (h32): each POST builds a fresh server, so a notifications/cancelled, which
  // comes on its own POST, reached no running call, and a payment the user cancelled went on.
  it("a cancellation on a later POST reaches the running call of its session", async () => {
    const { face, app } = service();
    let release = () => {};
    const probing = new Promise<void>((resolve) => {
      release = resolve;
    });
    let cancelledBeforePaying: boolean | undefined;
    face.pay = async (session) => {
      face.sessions.push(session);
      await probing;
      cancelledBeforePaying = session.signal.aborted;
      return { status: "paid", paymentId: PAYMENT_ID, amountUsd: "0.01" };
    };
    const { client } = await connect(app, { Authorization: `Bearer ${TOKEN}`, "X-Wallet-Address": WALLET });
    const asked = new AbortController();
    const call = client.callTool({ name: "pay_quote", arguments: { quoteId: "qt_1" } }, undefined, {
      signal: asked.signal,
    });
    for (let i = 0; i < 100 && face.sessions.length === 0; i++) await new Promise((r) => setImmediate(r));
    asked.abort();
    await call.catch(() => undefined);
    // The cancellation's POST has been answered once the client's call has ended.
    for (let i = 0; i < 100 && face.sessions[0]?.signal.aborted !== true; i++)
      await new Promise((r) => setImmediate(r));
    release();
    for (let i = 0; i < 100 && cancelledBeforePaying === undefined; i++)
      await new Promise((r) => setImmediate(r));
    expect(cancelledBeforePaying).toBe(true);
  });
});
