import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import type { Hono } from "hono";
import { describe, expect, it } from "vitest";
import pkg from "../../package.json" with { type: "json" };
import { buildService } from "../../test/helpers.js";
import { awaitingView, FakeFace, PAYMENT_ID } from "../mcp/testing/fake-face.js";

/**
 * `POST /mcp` on the 2026-07-28 revision (docs/mcp.md): the v2 SDK's own client, pinned to that
 * revision (no initialize, no session), through the app (`app.request`, no socket). Each request
 * is its own scope; approval is an input-required result whose `requestState` the client cannot
 * alter; the Origin guard and auth hold as on 2025-11-25.
 */
const TOKEN = "token-for-alice-0123456789";
const WALLET = "0x2222222222222222222222222222222222222222";
const approvalUrl = (id: string) => `https://pay.example/approve/${id}`;

function service(env: Record<string, string> = {}) {
  const face = new FakeFace();
  const { app } = buildService({ AUTH_TOKENS: `alice=${TOKEN}`, ...env }, { mcp: { face, approvalUrl } });
  return { face, app };
}

async function connect(app: Hono, capabilities: Record<string, unknown> = {}, autoFulfill = true) {
  const seen: Headers[] = [];
  const transport = new StreamableHTTPClientTransport(new URL("http://service.test/mcp"), {
    requestInit: { headers: { Authorization: `Bearer ${TOKEN}`, "X-Wallet-Address": WALLET } },
    fetch: async (url, init) => {
      const response = await app.request(String(url), init);
      seen.push(response.headers);
      return response;
    },
  });
  const client = new Client(
    { name: "test-2026", version: "1" },
    { capabilities, versionNegotiation: { mode: { pin: "2026-07-28" } }, inputRequired: { autoFulfill } },
  );
  await client.connect(transport);
  return { client, seen };
}

function awaiting(face: FakeFace) {
  const expires = new Date(Date.now() + 300_000).toISOString();
  face.payAnswer = () => ({ status: "awaiting_approval", paymentId: PAYMENT_ID, approvalExpiresAt: expires });
  face.payments.set(PAYMENT_ID, awaitingView(expires));
  return expires;
}

/**
 * A client with URL elicitation that answers nothing itself, after its first `pay_quote` (quote
 * `qt_1`) for a payment awaiting the wallet: the input-required result, with its `requestState`.
 */
async function askedOnce(app: Hono) {
  const { client } = await connect(app, { elicitation: { url: {} } }, false);
  const first = (await client.callTool(
    { name: "pay_quote", arguments: { quoteId: "qt_1" } },
    { allowInputRequired: true },
  )) as unknown as { resultType: string; requestState: string };
  return { client, first };
}

describe("POST /mcp, revision 2026-07-28", () => {
  it("serves the tools with no session: the package's version, each request its own scope", async () => {
    const { face, app } = service();
    const { client, seen } = await connect(app);
    expect(client.getServerVersion()).toMatchObject({ name: "x402-chat-agent", version: pkg.version });
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([
      "find_services",
      "get_budget",
      "get_payment",
      "get_quote",
      "list_payments",
      "pay_quote",
    ]);
    const quote = tools.find((t) => t.name === "get_quote");
    const properties = quote?.inputSchema.properties as Record<string, { description?: string }> | undefined;
    const url = properties?.url;
    expect(url?.description).toContain("find_services");
    expect(url?.description).not.toContain("discover_services");
    await client.callTool({ name: "get_budget", arguments: {} });
    await client.callTool({ name: "get_budget", arguments: {} });
    const scopes = face.sessions.map((s) => s.scopeId);
    expect(scopes).toHaveLength(2);
    expect(scopes[0]).not.toBe(scopes[1]);
    expect(face.sessions[0]).toMatchObject({ caller: "alice" });
    expect(seen.every((h) => h.get("mcp-session-id") === null)).toBe(true);
    await client.close();
  });

  it("asks a client with URL elicitation to open the approval page, then returns the payment", async () => {
    const { face, app } = service();
    const expires = awaiting(face);
    const { client } = await connect(app, { elicitation: { url: {} } });
    const asked: string[] = [];
    client.setRequestHandler("elicitation/create", async (request) => {
      asked.push(String((request.params as { url?: string }).url));
      face.payments.set(PAYMENT_ID, { ...awaitingView(expires), status: "settled", transaction: "0xabc" });
      return { action: "accept" };
    });
    const result = await client.callTool({ name: "pay_quote", arguments: { quoteId: "qt_1" } });
    expect(asked).toEqual([approvalUrl(PAYMENT_ID)]);
    expect(result.structuredContent).toMatchObject({ status: "settled", transaction: "0xabc" });
    expect(face.paid).toHaveLength(1); // the retry read the payment; it paid nothing more
    await client.close();
  });

  it("gives a client without URL elicitation the approval URL as a result", async () => {
    const { face, app } = service();
    awaiting(face);
    const { client } = await connect(app);
    const result = await client.callTool({ name: "pay_quote", arguments: { quoteId: "qt_1" } });
    expect(result.structuredContent).toMatchObject({
      status: "awaiting_approval",
      approvalUrl: approvalUrl(PAYMENT_ID),
      paymentId: PAYMENT_ID,
    });
    await client.close();
  });

  it("refuses a requestState that was altered, before the tool runs", async () => {
    const { face, app } = service();
    awaiting(face);
    const { client, first } = await askedOnce(app);
    expect(first.resultType).toBe("input_required");
    const [version, payload, mac] = first.requestState.split(".") as [string, string, string];
    const claims = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"));
    claims.p.paymentId = "pay_00000000-0000-4000-8000-000000000002";
    const forged = `${version}.${Buffer.from(JSON.stringify(claims)).toString("base64url")}.${mac}`;
    const retry = {
      name: "pay_quote",
      arguments: { quoteId: "qt_1" },
      requestState: forged,
      inputResponses: { approve: { action: "accept" } },
    };
    await expect(client.callTool(retry as { name: string }, { allowInputRequired: true })).rejects.toThrow(
      /Invalid or expired requestState/,
    );
    expect(face.paid).toHaveLength(1);
    await client.close();
  });

  // Found by a review (h42): a state answered for its payment whatever quote id the retry named.
  it("refuses a requestState sent with another quote id: it answers only for its own quote", async () => {
    const { face, app } = service();
    awaiting(face);
    const { client, first } = await askedOnce(app);
    const retry = (quoteId: string) => ({
      name: "pay_quote",
      arguments: { quoteId },
      requestState: first.requestState,
      inputResponses: { approve: { action: "decline" } },
    });
    const other = await client.callTool(retry("qt_2") as { name: string }, { allowInputRequired: true });
    expect(other.isError).toBe(true);
    expect(other.structuredContent).toMatchObject({ error: { code: "invalid_request" } });
    const same = await client.callTool(retry("qt_1") as { name: string }, { allowInputRequired: true });
    expect(same.structuredContent).toMatchObject({ status: "awaiting_approval", paymentId: PAYMENT_ID });
    expect(face.paid).toHaveLength(1);
    await client.close();
  });

  it("keeps the Origin guard and auth", async () => {
    const { app } = service({ REQUIRE_AUTH: "true" });
    const body = JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "server/discover",
      params: {
        _meta: {
          "io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientCapabilities": {},
        },
      },
    });
    const headers = {
      "Content-Type": "application/json",
      Accept: "application/json, text/event-stream",
      "MCP-Protocol-Version": "2026-07-28",
      "Mcp-Method": "server/discover",
    };
    const rebound = await app.request("/mcp", {
      method: "POST",
      headers: { ...headers, Authorization: `Bearer ${TOKEN}`, Origin: "http://evil.example" },
      body,
    });
    expect(rebound.status).toBe(401);
    const anonymous = await app.request("/mcp", { method: "POST", headers, body });
    expect(anonymous.status).toBe(401);
    const ok = await app.request("/mcp", {
      method: "POST",
      headers: { ...headers, Authorization: `Bearer ${TOKEN}` },
      body,
    });
    expect(ok.status).toBe(200);
  });
});
