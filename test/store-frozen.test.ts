/**
 * A PostgreSQL server that stops answering (SIGSTOP, a stalled proxy: connections stay open, no
 * error ever comes). Found by a black-box outage run: a quote's budget read waited for the chat's
 * whole deadline. Every read the service makes on a request's path gives up in bounded time as
 * `store_unavailable`; writes still wait for their answer (whether one committed is known only
 * from it). The store is opened through a TCP proxy that can be frozen, in front of the real server.
 */
import { randomUUID } from "node:crypto";
import { connect, createServer, type Server, type Socket } from "node:net";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openStore, type Store } from "../src/store/index.js";

const databaseUrl = process.env.DATABASE_URL;
const WALLET = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
/** The bound under test, short so the test waits little. */
const WITHIN_MS = 300;

/** A TCP proxy to `target`; `freeze()` stops passing bytes both ways, connections left open. */
async function freezableProxy(
  target: URL,
): Promise<{ url: string; freeze: () => void; close: () => Promise<void> }> {
  let frozen = false;
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect(Number(target.port || 5432), target.hostname);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on("error", () => {});
      s.on("close", () => sockets.delete(s));
    }
    client.on("data", (chunk) => void (frozen || upstream.write(chunk)));
    upstream.on("data", (chunk) => void (frozen || client.write(chunk)));
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  const url = new URL(target.href);
  url.hostname = "127.0.0.1";
  url.port = String(port);
  return {
    url: url.href,
    freeze: () => {
      frozen = true;
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

describe.runIf(databaseUrl)("a PostgreSQL server that stops answering", () => {
  const schema = `frozen_${randomUUID().replaceAll("-", "").slice(0, 12)}`;
  let proxy: Awaited<ReturnType<typeof freezableProxy>>;
  let store: Store;

  beforeAll(async () => {
    proxy = await freezableProxy(new URL(databaseUrl as string));
    store = await openStore({ databaseUrl: proxy.url, schema, readWithinMs: WITHIN_MS });
    // Warm every pooled path once, then freeze.
    await store.ledger.budget(WALLET, "req_1", new Date());
    proxy.freeze();
  });
  afterAll(async () => {
    await proxy?.close();
    await store?.close().catch(() => {});
    const sql = postgres(databaseUrl as string, { max: 1, onnotice: () => {} });
    await sql.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await sql.end();
  });

  const now = new Date();
  const reads: [string, () => Promise<unknown>][] = [
    ["ledger.budget (every quote and get_budget)", () => store.ledger.budget(WALLET, "req_1", now)],
    ["ledger.spending", () => store.ledger.spending(WALLET, now)],
    ["ledger.get", () => store.ledger.get("pay_1")],
    ["history.listHistory", () => store.history.listHistory({ wallet: WALLET, limit: 10 })],
    ["signIn.session (every request with a session token)", () => store.signIn.session("hash", now)],
    [
      "tabs.findServing (every payment that may use a tab)",
      () => store.tabs?.findServing("k", WALLET) ?? Promise.resolve(),
    ],
    ["tabs.get", () => store.tabs?.get("tab_1") ?? Promise.resolve()],
    ["tabs.usage", () => store.tabs?.usage("tab_1") ?? Promise.resolve()],
    ["tabs.listByWallet (GET /api/tabs)", () => store.tabs?.listByWallet(WALLET, 10) ?? Promise.resolve()],
    ["operator.listKeys", () => store.operator.listKeys()],
    ["audit.latest", () => store.audit.latest(["payment"], 1)],
  ];

  it.each(reads)("%s: store_unavailable in bounded time", async (_name, read) => {
    const error = await read().then(
      () => undefined,
      (e: unknown) => e,
    );
    // Without the bound the read waits as long as the server is frozen: the test times out.
    expect(error).toMatchObject({ name: "AppError", code: "store_unavailable" });
  });
});
