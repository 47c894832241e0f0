/**
 * The payment ledger's database is down (docs/protocol.md, `store_unavailable`). A driver error quotes the
 * SQL and its parameters; none of it may reach the client, the model or the model's text. A request with an
 * Idempotency-Key is refused before the stream with 503 `store_unavailable` and Retry-After; a tool that
 * fails ends the turn with `e:` and a failed finish reason, and JSON mode answers 503; `/readyz` says the
 * store is down.
 */
import { createServer } from "node:net";
import { type ToolSet, tool } from "ai";
import { drizzle } from "drizzle-orm/postgres-js";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { ToolProvider } from "../src/agent/index.js";
import { bootstrap, type Running } from "../src/bootstrap.js";
import { loadConfig } from "../src/config/index.js";
import { silentLogger } from "../src/log/index.js";
import type { Ledger, LedgerReads } from "../src/payments/index.js";
import { decodeStream, type StreamEvent } from "../src/protocol/index.js";
import { PgIdempotencyStore } from "../src/store/idempotency.js";
import { guardStore, postgresQuery, READ_WITHIN_MS } from "../src/store/index.js";
import { PgLedger } from "../src/store/ledger.js";
import {
  budgetInputSchema,
  discoverInputSchema,
  payInputSchema,
  quoteInputSchema,
  TOOL_NAMES,
} from "../src/tools/contract.js";
import { buildService, chatRequest, singleModelRegistry } from "./helpers.js";
import { type Call, scriptedModel, toolResultsSeen } from "./scripted.js";

const WALLET = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";

/** What a driver error carries and nobody outside the operator's log may see. */
function expectNoLeak(text: string): void {
  expect(text).not.toMatch(/failed query/i);
  expect(text).not.toMatch(/\bselect\b|\binsert into\b|\bupdate "/i);
  expect(text).not.toMatch(/params:/i);
  expect(text).not.toMatch(/ECONNREFUSED|PGlite is closed/);
  expect(text).not.toMatch(/\.ts:\d+:\d+/);
  expect(text.toLowerCase()).not.toContain(WALLET.toLowerCase());
}

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (!address || typeof address === "string") throw new Error("no port");
  return address.port;
}

let sql: postgres.Sql;
let rawLedger: Ledger & LedgerReads;
let downLedger: Ledger & LedgerReads;
let downIdempotency: PgIdempotencyStore;

beforeAll(async () => {
  // A ledger on a PostgreSQL server that is not there (nothing listens on the port).
  sql = postgres(`postgres://agent:pw@127.0.0.1:${await closedPort()}/ledger`, {
    max: 1,
    connect_timeout: 2,
    backoff: () => 0,
    onnotice: () => {},
  });
  rawLedger = new PgLedger(drizzle(sql), postgresQuery(sql));
  downLedger = guardStore(rawLedger);
  downIdempotency = guardStore(new PgIdempotencyStore(drizzle(sql)));
});
afterAll(async () => {
  await sql?.end({ timeout: 1 });
});

/** The four tools, each doing what the real one does first with the ledger. */
function ledgerTools(ledger: Ledger & LedgerReads): ToolProvider {
  return (ctx): ToolSet => ({
    [TOOL_NAMES.discover]: tool({
      inputSchema: discoverInputSchema,
      execute: async () => ({ services: [], errors: [], seen: await ledger.listByScope(ctx.payer.scopeId) }),
    }),
    [TOOL_NAMES.quote]: tool({
      inputSchema: quoteInputSchema,
      execute: async () => ({ ok: true, spent: String((await ledger.spending(WALLET, new Date())).today) }),
    }),
    [TOOL_NAMES.pay]: tool({
      inputSchema: payInputSchema,
      execute: async () => ({ status: "failed", claim: await ledger.get(`pay_${ctx.payer.scopeId}`) }),
    }),
    [TOOL_NAMES.budget]: tool({
      inputSchema: budgetInputSchema,
      execute: async () => ({ today: String((await ledger.spending(WALLET, new Date())).today) }),
    }),
  });
}

const CALLS: Call[] = [
  { toolName: TOOL_NAMES.discover, input: { query: "weather" } },
  { toolName: TOOL_NAMES.quote, input: { url: "https://api.example.com/weather" } },
  { toolName: TOOL_NAMES.pay, input: { url: "https://api.example.com/weather", maxUsd: "0.01" } },
  { toolName: TOOL_NAMES.budget, input: {} },
];

const body = { messages: [{ role: "user", content: "go" }], walletAddress: WALLET };

async function eventsOf(raw: string): Promise<StreamEvent[]> {
  const events: StreamEvent[] = [];
  for await (const event of decodeStream(new Response(raw).body as ReadableStream<Uint8Array>)) {
    events.push(event);
  }
  return events;
}

describe("the store's boundary", () => {
  it("turns a driver error (SQL and parameters in its message) into store_unavailable", async () => {
    // The hazard: the driver's own error quotes the statement and its parameters.
    const raw = await rawLedger.get("pay_1").catch((error: unknown) => error);
    expect(String(raw)).toMatch(/Failed query: select/);

    for (const attempt of [
      () => downLedger.spending(WALLET, new Date()),
      () => downLedger.get("pay_1"),
      () =>
        downIdempotency.claimIdempotencyKey({
          key: "k",
          wallet: WALLET,
          fingerprint: "f",
          now: new Date(),
          owner: "o",
          leaseMs: 10_000,
        }),
    ]) {
      const error = await attempt().catch((e: unknown) => e);
      expect(error).toMatchObject({ name: "AppError", code: "store_unavailable" });
      expectNoLeak(String((error as Error).message));
    }
  });

  /*
   * Found by a black-box run: with the database's connection frozen (no error, no answer), payment
   * reads and /metrics waited for good. A read gives up in READ_WITHIN_MS; a write never does.
   */
  it("a read from a database that stopped answering is store_unavailable in bounded time; a write waits", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    try {
      const frozen = () => new Promise<never>(() => {});
      const store = guardStore({ get: frozen, write: frozen }, { reads: ["get"] });
      const read = store.get().catch((e: unknown) => e);
      let wrote = false;
      void store.write().finally(() => {
        wrote = true;
      });
      await vi.advanceTimersByTimeAsync(READ_WITHIN_MS);
      expect(await read).toMatchObject({ name: "AppError", code: "store_unavailable" });
      await vi.advanceTimersByTimeAsync(60_000);
      expect(wrote).toBe(false);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe("a tool whose store is down", () => {
  it.each(CALLS)(
    "$toolName: e: store_unavailable, a failed finish, a stable code for the model, no SQL",
    async (call) => {
      const model = scriptedModel([[call]]);
      const { app } = buildService(
        {},
        { models: singleModelRegistry(model), tools: ledgerTools(downLedger) },
      );
      const res = await app.request("/api/chat", chatRequest(body));
      expect(res.status).toBe(200);
      const raw = await res.text();
      expectNoLeak(raw);
      const events = await eventsOf(raw);
      const errors = events.flatMap((e) => (e.type === "error" ? [e.error] : []));
      expect(errors.map((e) => e.code)).toEqual(["store_unavailable"]);
      const last = events.at(-1);
      expect(last?.type === "finish" && last.finish.finishReason).toBe("error");
      // What the model was handed: the stable code and a short sentence, nothing of the exception.
      const seen = toolResultsSeen(model);
      expectNoLeak(seen);
      expect(seen).toContain('"ok":false');
      expect(seen).toContain('"code":"store_unavailable"');
    },
  );

  it("answers 503 in JSON mode", async () => {
    const model = scriptedModel([[CALLS[3] as Call]]);
    const { app } = buildService({}, { models: singleModelRegistry(model), tools: ledgerTools(downLedger) });
    const res = await app.request("/api/chat", chatRequest(body, { Accept: "application/json" }));
    expect(res.status).toBe(503);
    const text = await res.text();
    expectNoLeak(text);
    const json = JSON.parse(text);
    expect(json.errors.map((e: { code: string }) => e.code)).toEqual(["store_unavailable"]);
    expect(json.finish.finishReason).toBe("error");
  });

  it("reports any other exception as internal (500 in JSON mode), its text kept out", async () => {
    const leaky = {
      ...downLedger,
      spending: async () => {
        throw new Error(`Failed query: select * from "payments" where wallet = $1\nparams: ${WALLET}`);
      },
    } as Ledger & LedgerReads;
    const model = scriptedModel([[CALLS[3] as Call]]);
    const { app } = buildService({}, { models: singleModelRegistry(model), tools: ledgerTools(leaky) });
    const res = await app.request("/api/chat", chatRequest(body, { Accept: "application/json" }));
    expect(res.status).toBe(500);
    const text = await res.text();
    expectNoLeak(text);
    expectNoLeak(toolResultsSeen(model));
    expect(JSON.parse(text).errors).toEqual([
      { code: "internal", message: "The get_budget step failed on an internal error." },
    ]);
  });
});

describe("an Idempotency-Key while the store is down", () => {
  it("is refused before the stream: 503 store_unavailable, problem+json, Retry-After", async () => {
    const { app } = buildService({}, { idempotency: downIdempotency });
    const res = await app.request("/api/chat", chatRequest(body, { "Idempotency-Key": "retry-1" }));
    expect(res.status).toBe(503);
    expect(res.headers.get("content-type")).toBe("application/problem+json");
    expect(res.headers.get("retry-after")).toBe("5");
    const text = await res.text();
    expectNoLeak(text);
    expect(JSON.parse(text)).toMatchObject({ status: 503, code: "store_unavailable" });
  });
});

describe("the whole service when its store goes away", () => {
  let running: Running;

  beforeAll(async () => {
    running = await bootstrap(
      loadConfig({ PAYMENTS: "external", DATA_DIR: "memory://", MODEL_PROVIDER: "offline" }),
      silentLogger,
    );
    const ready = await running.service.app.request("/readyz");
    expect(ready.status).toBe(200);
    // The embedded database closes under the running service: every ledger call now fails.
    await running.store?.close();
  });
  afterAll(async () => {
    await running?.service.shutdown().catch(() => {});
  });

  it("streams e: store_unavailable and d: error for a budget question; the reply quotes no SQL", async () => {
    const ask = { messages: [{ role: "user", content: "what is my budget?" }], walletAddress: WALLET };
    const res = await running.service.app.request("/api/chat", chatRequest(ask));
    const raw = await res.text();
    expectNoLeak(raw);
    const events = await eventsOf(raw);
    expect(events.filter((e) => e.type === "error")).toMatchObject([
      { type: "error", error: { code: "store_unavailable" } },
    ]);
    const last = events.at(-1);
    expect(last?.type === "finish" && last.finish.finishReason).toBe("error");

    const json = await running.service.app.request(
      "/api/chat",
      chatRequest(ask, { Accept: "application/json" }),
    );
    expect(json.status).toBe(503);
    expectNoLeak(await json.text());
  });

  it("refuses an Idempotency-Key with 503 and Retry-After, and /readyz names the store", async () => {
    const res = await running.service.app.request(
      "/api/chat",
      chatRequest(body, { "Idempotency-Key": "retry-2" }),
    );
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("5");
    expect(await res.json()).toMatchObject({ code: "store_unavailable" });

    const ready = await running.service.app.request("/readyz");
    expect(ready.status).toBe(503);
    expect(ready.headers.get("content-type")).toBe("application/problem+json");
    const problem = await ready.json();
    expect(problem).toMatchObject({
      code: "not_ready",
      checks: [{ name: "store", kind: "store", ok: false }],
    });
    expectNoLeak(JSON.stringify(problem));
    // Liveness is not readiness: the process still answers.
    expect((await running.service.app.request("/healthz")).status).toBe(200);
  });
});
