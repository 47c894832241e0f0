import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { type CallToolResult, ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it } from "vitest";
import { parseWallet } from "../chains/index.js";
import { AppError } from "../errors/index.js";
import type { Payer } from "../payments/index.js";
import { QUOTE_ID_MAX_CHARS } from "../payments/index.js";
import { createMcpServer } from "./index.js";
import { awaitingView, FakeFace, PAYEE, PAYMENT_ID } from "./testing/fake-face.js";

const T0 = Date.parse("2026-03-01T12:00:00.000Z");
const EXPIRES = "2026-03-01T12:05:00.000Z";
const WALLET = parseWallet("0x2222222222222222222222222222222222222222");
if (!WALLET.ok) throw new Error("bad wallet");
const SESSION: Payer = {
  caller: "alice",
  wallet: WALLET.wallet,
  spendingLimits: { perTransaction: 1_000_000n, daily: 5_000_000n },
  scopeId: "mcp_session-1",
};
const approvalUrl = (id: string) => `https://pay.example/approve/${id}`;
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

async function connect(
  face: FakeFace,
  options: {
    elicitUrl?: boolean;
    session?: Payer;
    keep?: (work: Promise<unknown>) => void;
    onError?: (error: unknown) => void;
  } = {},
) {
  const server = createMcpServer(face, options.session ?? SESSION, {
    approvalUrl,
    ...(options.keep ? { keep: options.keep } : {}),
    ...(options.onError ? { onError: options.onError } : {}),
    callTimeoutMs: 30_000,
    now: () => new Date(T0),
    approvalPollMs: 1,
  });
  const client = new Client(
    { name: "test", version: "1" },
    { capabilities: options.elicitUrl ? { elicitation: { url: {} } } : {} },
  );
  const [a, b] = InMemoryTransport.createLinkedPair();
  await Promise.all([server.connect(a), client.connect(b)]);
  closers.push(async () => {
    await client.close();
    await server.close();
  });
  return client;
}

async function call(client: Client, name: string, args: Record<string, unknown> = {}) {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

describe("MCP tools", () => {
  it("lists six tools with honest annotations; the paying one is not read-only and is idempotent", async () => {
    const client = await connect(new FakeFace());
    const { tools } = await client.listTools();
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    expect(Object.keys(byName).sort()).toEqual(
      ["find_services", "get_budget", "get_payment", "get_quote", "list_payments", "pay_quote"].sort(),
    );
    expect(byName.pay_quote?.annotations).toMatchObject({
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: true,
      openWorldHint: true,
    });
    for (const name of ["find_services", "get_quote", "get_payment", "list_payments", "get_budget"]) {
      expect(byName[name]?.annotations?.readOnlyHint, name).toBe(true);
    }
  });

  it("names no argument that could carry a limit, a price cap or a wallet", async () => {
    const client = await connect(new FakeFace());
    const { tools } = await client.listTools();
    const names = tools.flatMap((t) => Object.keys(t.inputSchema.properties ?? {}));
    for (const forbidden of [/limit(?!$)/i, /max/i, /wallet/i, /daily/i, /perRequest/i, /approv/i]) {
      expect(names.filter((n) => forbidden.test(n))).toEqual([]);
    }
  });

  it("refuses an argument the schema does not name, and pays nothing", async () => {
    const face = new FakeFace();
    const client = await connect(face);
    const result = await call(client, "pay_quote", { quoteId: "qt_1", maxUsd: "1000" });
    expect(result.isError).toBe(true);
    expect(face.paid).toEqual([]);
  });

  it("takes a quote id as long as the face gives (a request of a few KiB), and no longer", async () => {
    const face = new FakeFace();
    const client = await connect(face);
    const long = `q1.${"a".repeat(QUOTE_ID_MAX_CHARS - 3)}`;
    expect((await call(client, "pay_quote", { quoteId: long })).isError).toBeFalsy();
    expect((await call(client, "pay_quote", { quoteId: `${long}a` })).isError).toBe(true);
    expect(face.paid).toEqual([{ quoteId: long }]);
  });

  it("pays with the session's wallet, limits and scope, never the arguments'", async () => {
    const face = new FakeFace();
    const client = await connect(face);
    const result = await call(client, "pay_quote", { quoteId: "qt_1" });
    expect(result.isError).toBeFalsy();
    expect(face.paid).toEqual([{ quoteId: "qt_1" }]);
    const seen = face.sessions[0];
    expect(seen).toMatchObject({ caller: "alice", wallet: SESSION.wallet, scopeId: "mcp_session-1" });
    expect(seen?.spendingLimits).toEqual(SESSION.spendingLimits);
    expect(seen?.deadline).toBe(T0 + 30_000);
  });

  it("hands a paying call to the service's lifecycle, so a shutdown waits for it", async () => {
    const kept: Promise<unknown>[] = [];
    const client = await connect(new FakeFace(), { keep: (work) => kept.push(work) });
    await call(client, "get_payment", { paymentId: PAYMENT_ID });
    expect(kept).toHaveLength(0);
    const result = await call(client, "pay_quote", { quoteId: "qt_1" });
    expect(kept).toHaveLength(1);
    expect(await kept[0]).toEqual(result);
  });

  it("a refused payment is isError with the chat's stable code", async () => {
    const face = new FakeFace();
    face.payAnswer = () => ({
      status: "refused",
      error: { code: "limit_exceeded", message: "Over the daily limit." },
    });
    const client = await connect(face);
    const result = await call(client, "pay_quote", { quoteId: "qt_1" });
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({ status: "refused", error: { code: "limit_exceeded" } });
  });

  it("an AppError keeps its code; any other exception is internal and its text stays out", async () => {
    const face = new FakeFace();
    face.failWith = new AppError("store_unavailable", "The ledger is unavailable.");
    const client = await connect(face);
    expect((await call(client, "get_budget")).structuredContent).toMatchObject({
      error: { code: "store_unavailable" },
    });
    face.failWith = new Error("SELECT secret FROM keys");
    const result = await call(client, "find_services", { query: "weather" });
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({ error: { code: "internal" } });
    expect(JSON.stringify(result)).not.toContain("secret");
  });

  // Found by a black-box re-test: the chat said the directory was down, MCP said "0 service(s)".
  it("find_services with the directory down is service_unavailable, not an empty list", async () => {
    const face = new FakeFace();
    face.findServices = async () =>
      ({ services: [], errors: ["http://d.example/discovery: HTTP 503"] }) as unknown as Awaited<
        ReturnType<FakeFace["findServices"]>
      >;
    const client = await connect(face);
    const result = await call(client, "find_services", { query: "weather" });
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({ services: [], error: { code: "service_unavailable" } });
  });

  it("a quote too large for an id says so, and is no error", async () => {
    const face = new FakeFace();
    const quote = face.quote.bind(face);
    face.quote = async (session) => {
      const { quoteId: _id, quoteExpiresAt: _at, ...priced } = await quote(session);
      return priced;
    };
    const client = await connect(face);
    const result = await call(client, "get_quote", { url: "https://weather.example/forecast" });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).not.toHaveProperty("quoteId");
    expect(JSON.stringify(result.content)).toContain("too large to pay by quote id");
  });

  it("a read's unexpected error reaches the operator's log, never the client", async () => {
    const face = new FakeFace();
    const logged: unknown[] = [];
    face.getPayment = async () => {
      throw new Error("connect postgres://user:hunter2@db");
    };
    const client = await connect(face, { onError: (error) => logged.push(error) });
    const result = await call(client, "get_payment", { paymentId: PAYMENT_ID });
    expect(result).toMatchObject({ isError: true, structuredContent: { error: { code: "internal" } } });
    expect(JSON.stringify(result)).not.toContain("hunter2");
    expect(logged).toHaveLength(1);
  });

  it("a quote carries its quoteId; service text is marked untrusted", async () => {
    const client = await connect(new FakeFace());
    const result = await call(client, "get_quote", { url: "https://weather.example/forecast" });
    expect(result.structuredContent).toMatchObject({ ok: true, quoteId: "qt_1" });
    expect(JSON.stringify(result.content)).toContain("untrusted");
  });

  it("get_payment of an unknown id is not_found; an anonymous caller lists nothing", async () => {
    const face = new FakeFace();
    face.payments.set(PAYMENT_ID, awaitingView(EXPIRES));
    const client = await connect(face, { session: { scopeId: "s" } });
    const unknown = await call(client, "get_payment", { paymentId: PAYMENT_ID.replace("1", "2") });
    expect(unknown.structuredContent).toMatchObject({ error: { code: "not_found" } });
    expect((await call(client, "list_payments")).structuredContent).toEqual({ items: [] });
  });

  it("list_payments reads a page at a time: the caller's own, a bounded limit, cursor in, nextCursor out", async () => {
    const face = new FakeFace();
    face.payments.set(PAYMENT_ID, awaitingView(EXPIRES));
    face.nextCursor = "MjAyNi0wMy0wMVQxMjowMDowMC4wMDBafHBheV8x";
    const client = await connect(face);
    const first = await call(client, "list_payments", { limit: 1 });
    expect(first.isError).toBeFalsy();
    expect(first.structuredContent).toMatchObject({
      items: [{ paymentId: PAYMENT_ID }],
      nextCursor: face.nextCursor,
    });
    expect(JSON.stringify(first.content)).toContain("cursor");
    const next = await call(client, "list_payments", {
      limit: 1,
      cursor: face.nextCursor,
      statuses: ["settled"],
    });
    expect(next.isError).toBeFalsy();
    expect(face.listed).toEqual([
      { caller: "alice", limit: 1 },
      { caller: "alice", limit: 1, cursor: face.nextCursor, statuses: ["settled"] },
    ]);
    // Not a cursor (too long, other characters) or a page too large: refused before the face.
    for (const args of [{ cursor: "A".repeat(201) }, { cursor: "a b" }, { limit: 51 }, { limit: 0 }]) {
      expect((await call(client, "list_payments", args)).isError, JSON.stringify(args)).toBe(true);
    }
    expect(face.listed).toHaveLength(2);
    // The face refuses a cursor it did not give: the code reaches the client.
    face.listPayments = async () => {
      throw new AppError("invalid_request", "cursor: not a cursor this service gave.");
    };
    const bad = await call(client, "list_payments", { cursor: "AAAA" });
    expect(bad).toMatchObject({ isError: true, structuredContent: { error: { code: "invalid_request" } } });
  });
});

describe("approval through MCP", () => {
  const awaiting = () => ({
    status: "awaiting_approval" as const,
    paymentId: PAYMENT_ID,
    amountUsd: "2.5",
    network: "eip155:84532",
    approvalExpiresAt: EXPIRES,
    serviceName: "Weather now",
  });

  it("a client without URL elicitation gets the approval URL as a normal result", async () => {
    const face = new FakeFace();
    face.payAnswer = awaiting;
    face.payments.set(PAYMENT_ID, awaitingView(EXPIRES));
    const client = await connect(face);
    const result = await call(client, "pay_quote", { quoteId: "qt_1" });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({
      status: "awaiting_approval",
      approvalUrl: approvalUrl(PAYMENT_ID),
      expiresAt: EXPIRES,
      paymentId: PAYMENT_ID,
      serviceName: "Weather now",
    });
    expect(JSON.stringify(result.content)).toContain("get_payment");
  });

  it("a client with URL elicitation is sent to the page, and the call returns the settled payment", async () => {
    const face = new FakeFace();
    face.payAnswer = awaiting;
    face.payments.set(PAYMENT_ID, awaitingView(EXPIRES));
    const client = await connect(face, { elicitUrl: true });
    const asked: Array<Record<string, unknown>> = [];
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params as Record<string, unknown>);
      // The wallet signs on the page: the ledger shows the payment settled.
      face.payments.set(PAYMENT_ID, {
        ...awaitingView(EXPIRES),
        status: "settled",
        transaction: "0xabc",
        data: { untrusted: true, contentType: "application/json", body: { temp: 21 }, truncated: false },
      });
      return { action: "accept" };
    });
    const result = await call(client, "pay_quote", { quoteId: "qt_1" });
    expect(asked).toHaveLength(1);
    expect(asked[0]).toMatchObject({ mode: "url", url: approvalUrl(PAYMENT_ID), elicitationId: PAYMENT_ID });
    const message = String(asked[0]?.message);
    expect(message).toContain("pay $2.5 (USDC) to");
    expect(message).toContain(PAYEE);
    expect(message).toContain("for Weather now (https://weather.example/forecast)");
    expect(message).toContain("12:05:00 UTC (in 5 minutes)");
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ status: "settled", data: { body: { temp: 21 } } });
  });

  it("a declined elicitation ends the wait with the approval URL; a rejection in the wallet is no error", async () => {
    const face = new FakeFace();
    face.payAnswer = awaiting;
    face.payments.set(PAYMENT_ID, awaitingView(EXPIRES));
    const client = await connect(face, { elicitUrl: true });
    client.setRequestHandler(ElicitRequestSchema, async () => ({ action: "decline" }));
    const declined = await call(client, "pay_quote", { quoteId: "qt_1" });
    expect(declined.structuredContent).toMatchObject({ status: "awaiting_approval" });

    face.payments.set(PAYMENT_ID, { ...awaitingView(EXPIRES), status: "rejected" });
    const read = await call(client, "get_payment", { paymentId: PAYMENT_ID });
    expect(read.isError).toBeFalsy();
    expect(read.structuredContent).toMatchObject({ status: "rejected" });
  });
});
