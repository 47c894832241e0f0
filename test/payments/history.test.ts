/**
 * docs/protocol.md#listing-payments: `GET /api/payments` lists the caller's own payments, newest first, paged
 * with a cursor, filtered by status and time, as JSON or CSV. Two callers share one ledger (and a wallet):
 * neither ever sees the other's payments, and a caller without a token (a wallet address is no proof) sees
 * none. Bad query parameters get problem+json 400 `invalid_request`. The real store (PGlite in memory, or
 * PostgreSQL with DATABASE_URL) behind the real route and the client SDK.
 */
import { Hono } from "hono";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChatClient, ChatHttpError } from "../../src/client/index.js";
import { AppError } from "../../src/errors/index.js";
import { auth } from "../../src/http/auth.js";
import { csvCell, mountPaymentRoutes } from "../../src/http/payments.js";
import { problemResponse } from "../../src/http/problem.js";
import { silentLogger } from "../../src/log/index.js";
import { createPayments, SUGGESTED_LIMITS } from "../../src/payments/index.js";
import { explorerTxUrl } from "../../src/protocol/index.js";
import { openStore, type Store } from "../../src/store/index.js";
import { at, HOUR, payment } from "../../src/store/testing/fixtures.js";
import { dropSchema, uniqueSchema } from "./harness.js";

const ALICE = "alice-token-0123456789abcdef";
const BOB = "bob-token-0123456789abcdef01";
const SHARED_WALLET = "0x000000000000000000000000000000000000a11c";

let store: Store;
let app: Hono;
const schema = process.env.DATABASE_URL ? uniqueSchema("hist") : undefined;
/** Alice's payment ids, oldest first. */
const alice: string[] = [];
const bob: string[] = [];

beforeAll(async () => {
  store = await openStore(
    process.env.DATABASE_URL && schema
      ? { databaseUrl: process.env.DATABASE_URL, schema }
      : { dataDir: "memory://" },
  );
  // Five of Alice's an hour apart (the third settled on Base, with a formula-like payee), two of
  // Bob's in between, and one anonymous one: all from the same wallet.
  const make = async (caller: string | null, hour: number, payTo?: string) => {
    const input = payment({
      wallet: SHARED_WALLET,
      caller,
      now: at(hour * HOUR),
      ...(payTo ? { payTo } : {}),
      ...(hour === 2 ? { network: "eip155:8453" } : {}),
    });
    const result = await store.ledger.reserve(input);
    if (!result.ok) throw new Error("refused");
    return input.paymentId;
  };
  for (let hour = 0; hour < 5; hour++) {
    alice.push(await make("alice", hour, hour === 2 ? '=HYPERLINK("http://evil")' : undefined));
    if (hour === 1 || hour === 3) bob.push(await make("bob", hour));
  }
  await make(null, 6);
  await store.ledger.transition(alice[2] ?? "", "signed", {}, at(2 * HOUR + 1));
  await store.ledger.transition(alice[2] ?? "", "submitted", {}, at(2 * HOUR + 2));
  await store.ledger.transition(
    alice[2] ?? "",
    "settled",
    { txHash: `0x${"ab".repeat(32)}`, payer: SHARED_WALLET },
    at(2 * HOUR + 3),
  );
  app = new Hono();
  // As the service's app does (src/http/app.ts): a middleware's AppError becomes problem+json.
  app.onError((error) => {
    if (error instanceof AppError) return problemResponse(error);
    throw error;
  });
  // The payments face on the real store (no chain is reached: only its reads are called).
  const { face } = createPayments({
    ledger: store.ledger,
    history: store.history,
    delivered: store.delivered,
    discoveryUrls: [],
    rpcUrls: {},
    assets: {},
    allowPrivateOrigins: [],
    signerKeys: [],
    preferredNetworks: [],
    limits: { ...SUGGESTED_LIMITS, allowedNetworks: [], allowedServices: "any" },
    maxTimeoutSeconds: 600,
    minTimeLeftMs: 0,
    serviceTimeoutMs: 15_000,
    reconcileIntervalMs: 3_600_000,
  });
  mountPaymentRoutes(app, {
    face,
    explorer: explorerTxUrl,
    auth: auth({
      authTokens: new Map([
        [ALICE, "alice"],
        [BOB, "bob"],
      ]),
      requireAuth: false,
    }),
    logger: silentLogger,
  });
});

afterAll(async () => {
  await store?.close();
  await dropSchema(schema);
});

const request = (query: string, token?: string) =>
  app.request(`/api/payments${query}`, token ? { headers: { Authorization: `Bearer ${token}` } } : {});

const client = (token?: string) =>
  new ChatClient({
    baseUrl: "http://service.test",
    ...(token ? { token } : {}),
    fetch: (async (url: string | URL | Request, init?: RequestInit) =>
      app.request(String(url), init)) as typeof fetch,
  });

describe("GET /api/payments", () => {
  it("lists the caller's own payments, newest first, with explorer links where the network has one", async () => {
    const page = await client(ALICE).listPayments();
    expect(page.items.map((p) => p.paymentId)).toEqual([...alice].reverse());
    expect(page.nextCursor).toBeUndefined();
    const settled = page.items.find((p) => p.paymentId === alice[2]);
    expect(settled).toMatchObject({
      status: "settled",
      amount: { usd: "1.00", atomic: "1000000" },
      network: "eip155:8453",
      service: "https://weather.example/paris",
      transaction: `0x${"ab".repeat(32)}`,
      explorerUrl: `https://basescan.org/tx/0x${"ab".repeat(32)}`,
    });
    // The local network has no explorer: no link is made up.
    expect(page.items.find((p) => p.paymentId === alice[0])?.explorerUrl).toBeUndefined();
  });

  it("never lists another caller's payments, and nothing without a token (a wallet alone is no proof)", async () => {
    const bobs = await client(BOB).listPayments({ limit: 100 });
    expect(bobs.items.map((p) => p.paymentId)).toEqual([...bob].reverse());
    expect(bobs.items.some((p) => alice.includes(p.paymentId))).toBe(false);
    expect((await client().listPayments()).items).toEqual([]);
    // Asking by wallet is not a way in either: the parameter does not exist.
    const byWallet = await request(`?wallet=${SHARED_WALLET}`);
    expect(byWallet.status).toBe(400);
    // And a cursor of Alice's gives Bob nothing of hers.
    const first = await client(ALICE).listPayments({ limit: 1 });
    const next = await client(BOB).listPayments({ cursor: first.nextCursor ?? "" });
    expect(next.items.every((p) => bob.includes(p.paymentId))).toBe(true);
  });

  it("pages with a cursor: every payment once, in order", async () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await client(ALICE).listPayments({ limit: 2, ...(cursor ? { cursor } : {}) });
      seen.push(...page.items.map((p) => p.paymentId));
      cursor = page.nextCursor;
      pages++;
    } while (cursor && pages < 10);
    expect(pages).toBe(3);
    expect(seen).toEqual([...alice].reverse());
    const response = await request("?limit=2", ALICE);
    expect(response.headers.get("link")).toMatch(/^<\/api\/payments\?limit=2&cursor=[\w-]+>; rel="next"$/);
  });

  it("filters by status and by time", async () => {
    const settled = await client(ALICE).listPayments({ status: ["settled"] });
    expect(settled.items.map((p) => p.paymentId)).toEqual([alice[2]]);
    const window = await client(ALICE).listPayments({ since: at(1 * HOUR), until: at(3 * HOUR) });
    expect(window.items.map((p) => p.paymentId)).toEqual([alice[2], alice[1]]);
  });

  it("exports the same rows as CSV, safe to open in a spreadsheet", async () => {
    const response = await request("?format=csv", ALICE);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    expect(response.headers.get("content-disposition")).toContain("payments.csv");
    const lines = (await response.text()).trimEnd().split("\r\n");
    expect(lines[0]).toBe(
      "createdAt,paymentId,status,amountUsd,amountAtomic,asset,network,payTo,service,transaction,explorerUrl,settledAt,reason",
    );
    expect(lines.slice(1).map((l) => l.split(",")[1])).toEqual([...alice].reverse());
    const settled = lines.find((l) => l.includes(alice[2] ?? "-"));
    // The payee that looks like a formula is prefixed, and quoted for its quotes.
    expect(settled).toContain(`"'=HYPERLINK(""http://evil"")"`);
    expect(settled).toContain("https://basescan.org/tx/");
    expect(await (await request("?format=csv", BOB)).text()).not.toContain(alice[0]);
  });

  it("neutralises every cell a spreadsheet would run", () => {
    expect(["=1+1", "+1", "-1", "@SUM(A1)", "\tx", "plain", "a,b"].map(csvCell)).toEqual([
      "'=1+1",
      "'+1",
      "'-1",
      "'@SUM(A1)",
      "'\tx",
      "plain",
      '"a,b"',
    ]);
  });

  it("refuses bad query parameters with problem+json 400 invalid_request, naming the parameter", async () => {
    for (const [query, param] of [
      ["?status=paid", "status"],
      ["?since=yesterday", "since"],
      ["?since=2026-03-02&until=2026-03-01", "until"],
      ["?limit=0", "limit"],
      ["?limit=101", "limit"],
      ["?limit=1e2", "limit"],
      ["?cursor=bm9wZQ", "cursor"],
      // Dates JavaScript reads and PostgreSQL refuses (no year 0) or cannot read (+275760).
      ["?since=0000-01-01", "since"],
      // A day the calendar does not have (Date reads it as March 1) and an instant cut short.
      ["?since=2024-02-30", "since"],
      ["?until=2026-03-01T1", "until"],
      ["?until=9999-12-31T23:00:00-02:00", "until"],
      [
        `?cursor=${Buffer.from(`0000-01-01T00:00:00.000Z|pay_${"0".repeat(8)}-0000-4000-8000-${"0".repeat(12)}`).toString("base64url")}`,
        "cursor",
      ],
      ["?format=xml", "format"],
      ["?status=settled&status=failed", "status"],
      ["?wallet=0xabc", "wallet"],
    ] as const) {
      const response = await request(query, ALICE);
      expect(response.status, query).toBe(400);
      expect(response.headers.get("content-type")).toBe("application/problem+json");
      const body = (await response.json()) as { code: string; errors: Array<{ path: string }> };
      expect(body.code, query).toBe("invalid_request");
      expect(body.errors[0]?.path, query).toBe(param);
    }
    const error = await client(ALICE)
      .listPayments({ status: ["paid"] })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ChatHttpError);
    expect((await request("", "unknown-token")).status).toBe(401);
  });
});
