import { randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { drizzle } from "drizzle-orm/pglite";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openStore, postgresQuery } from "./index.js";
import { migrate } from "./migrate.js";
import { MIGRATIONS } from "./migrations/index.js";
import { describeLedger } from "./testing/ledger-suite.js";

const databaseUrl = process.env.DATABASE_URL;
const USD = 1_000_000n;
const limits = { perTransaction: 10n * USD, perRequest: 10n * USD, daily: 10n * USD };

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "ledger-test-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describeLedger("PGlite (on disk)", () => openStore({ dataDir: join(dir, "suite") }));

describe("store on disk (PGlite)", () => {
  it("keeps payments and spend across a reopen, and migrates only once", async () => {
    const dataDir = join(dir, "reopen");
    const now = new Date();
    const first = await openStore({ dataDir });
    expect(first.kind).toBe("pglite");
    const reserved = await first.ledger.reserve({
      paymentId: "pay_persisted",
      wallet: "0xpersist",
      scopeId: "req_1",
      service: "https://a.example/x",
      network: "eip155:31337",
      asset: "0xasset",
      payTo: "0xpayee",
      amount: 3n * USD,
      requirement: { scheme: "exact" },
      limits,
      now,
    });
    expect(reserved.ok).toBe(true);
    await first.ledger.transition("pay_persisted", "signed", { authorization: { nonce: "0x01" } }, now);
    await first.ledger.transition("pay_persisted", "unknown", { error: "timeout after send" }, now);
    await first.close();

    const second = await openStore({ dataDir });
    try {
      const record = await second.ledger.get("pay_persisted");
      expect(record).toMatchObject({ status: "unknown", amount: 3n * USD, authorization: { nonce: "0x01" } });
      expect(record?.history.map((h) => h.status)).toEqual(["reserved", "signed", "unknown"]);
      expect(await second.ledger.spending("0xpersist", now)).toEqual({
        settled: 0n,
        pending: 0n,
        unknown: 3n * USD,
        today: 3n * USD,
      });
      expect((await second.ledger.listByStatus(["unknown"])).map((p) => p.paymentId)).toEqual([
        "pay_persisted",
      ]);
    } finally {
      await second.close();
    }
  });

  it("runs migrations idempotently", async () => {
    const client = new PGlite("memory://");
    try {
      const db = drizzle(client);
      expect(await migrate(db, "public")).toEqual(MIGRATIONS.map((m) => m.id));
      expect(await migrate(db, "public")).toEqual([]);
      expect(await migrate(db, "other_schema")).toEqual(MIGRATIONS.map((m) => m.id));
    } finally {
      await client.close();
    }
  });

  it("refuses a schema name it would have to quote", async () => {
    await expect(openStore({ dataDir: "memory://", schema: 'x"; drop table payments; --' })).rejects.toThrow(
      /invalid schema name/,
    );
  });
});

if (databaseUrl) {
  describe("store on the PostgreSQL server", () => {
    const schema = `store_test_${randomUUID().replaceAll("-", "").slice(0, 16)}`;
    afterAll(async () => {
      const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
      await sql.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await sql.end();
    });

    it("migrates once when several processes open a fresh schema at the same time", async () => {
      const stores = await Promise.all(Array.from({ length: 4 }, () => openStore({ databaseUrl, schema })));
      try {
        expect(stores.every((s) => s.kind === "postgres")).toBe(true);
        const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
        const rows = await sql.unsafe(`SELECT id FROM "${schema}".schema_migrations ORDER BY id`);
        await sql.end();
        expect(rows.map((r) => r.id)).toEqual(MIGRATIONS.map((m) => m.id));
        // Data written through one store is visible through another.
        const now = new Date();
        const [a, b] = stores;
        await a?.ledger.reserve({
          paymentId: "pay_shared",
          wallet: "0xshared",
          scopeId: "req_shared",
          service: "https://a.example/",
          network: "eip155:31337",
          asset: "0xasset",
          payTo: "0xpayee",
          amount: USD,
          requirement: {},
          limits,
          now,
        });
        expect((await b?.ledger.spending("0xshared", now))?.today).toBe(USD);
      } finally {
        await Promise.all(stores.map((s) => s.close()));
      }
      const reopened = await openStore({ databaseUrl, schema });
      expect(await reopened.ledger.get("pay_shared")).toMatchObject({ status: "reserved" });
      await reopened.close();
    });

    /*
     * Found by a black-box run: a retry whose insert met the key's row, released (deleted) by the
     * abandoned attempt before the retry could lock it, answered 500 ("vanished while locked").
     */
    it("a key released between a claim's insert and its lock is claimed afresh, not a 500", async () => {
      const store = await openStore({ databaseUrl, schema });
      const sql = postgres(databaseUrl, { max: 2, onnotice: () => {} });
      try {
        const key = `idem_${randomUUID()}`;
        const base = { wallet: "0xabc", fingerprint: "sha256:body", leaseMs: 10_000 };
        const now = new Date();
        expect(await store.idempotency.claimIdempotencyKey({ ...base, key, now, owner: "a" })).toEqual({
          state: "new",
        });
        // The abandoned attempt's release holds the row while the retry's insert meets it.
        let claiming: Promise<unknown> | undefined;
        await sql.begin(async (tx) => {
          await tx.unsafe(`SELECT 1 FROM "${schema}".idempotency_keys WHERE key = $1 FOR UPDATE`, [key]);
          claiming = store.idempotency.claimIdempotencyKey({ ...base, key, now, owner: "b" });
          // Until the claim waits on that row's lock (read on the pool's other connection).
          for (let waiting = 0; waiting === 0; ) {
            const [row] = await sql`select count(*)::int as n from pg_stat_activity
              where wait_event_type = 'Lock' and query ilike '%idempotency_keys%for update%'`;
            waiting = row?.n ?? 0;
          }
          await tx.unsafe(`DELETE FROM "${schema}".idempotency_keys WHERE key = $1`, [key]);
        });
        expect(await claiming).toEqual({ state: "new" });
      } finally {
        await sql.end();
        await store.close();
      }
    });

    it("sends the ledger's hot calls as prepared statements, parsed once per connection", async () => {
      // Unprepared, each call with parameters is two round trips (parse and describe, then run).
      const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
      try {
        const query = postgresQuery(sql);
        const text = "select $1::int + 1 as n, $2::text as tag";
        expect(await query(text, [1, "first"])).toEqual([{ n: 2, tag: "first" }]);
        expect(await query(text, [41, "second"])).toEqual([{ n: 42, tag: "second" }]);
        const prepared = await sql`select statement from pg_prepared_statements where statement = ${text}`;
        expect(prepared).toHaveLength(1);
      } finally {
        await sql.end();
      }
    });
  });
} else {
  describe("store on the PostgreSQL server", () => {
    it.skip("needs DATABASE_URL (e.g. postgres://postgres@127.0.0.1:5432/test)", () => {});
  });
}
