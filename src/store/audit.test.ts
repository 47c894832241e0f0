import { randomUUID } from "node:crypto";
import { PGlite } from "@electric-sql/pglite";
import postgres from "postgres";
import { afterAll, describe, expect, it } from "vitest";
import { type AuditEntry, AuditLog, type AuditStore, MemoryAuditStore } from "../audit/index.js";
import { PgAuditStore } from "./audit.js";
import { openStore, pgliteQuery, type Store } from "./index.js";
import { migratedImage } from "./testing/image.js";

/**
 * The audit trail on PostgreSQL (PGlite, and a server when DATABASE_URL is set): the chain that
 * `audit_append` builds is the one src/audit computes, holds when nothing was touched, and names
 * the first record that was changed, removed or reordered by hand; appenders of several
 * instances make one chain.
 */

const databaseUrl = process.env.DATABASE_URL;
const T = new Date("2026-03-01T12:00:00.000Z");

interface Backend {
  store: AuditStore;
  /** Plain SQL in the trail's schema, as an intruder with the database's password would run it. */
  sql(text: string): Promise<unknown>;
  /** Another instance's store on the same database (PostgreSQL only). */
  another?(): Promise<AuditStore>;
}

const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

const entries = (n: number, from = 0): AuditEntry[] =>
  Array.from({ length: n }, (_, i) => ({
    at: new Date(T.getTime() + (from + i) * 1000),
    kind: i % 2 ? "payment.settled" : "payment.quoted",
    caller: i % 3 ? "ops-key" : null,
    requestId: `req_${from + i}`,
    paymentId: `pay_${from + i}`,
    data: {
      amountUsd: "0.01",
      n: from + i,
      ratio: 0.1 + i,
      big: 10n ** 30n,
      nested: { z: [1, "two", null, { b: true, a: "é ✓ \u{1F600}" }], a: "" },
      nul: "a\u0000b",
      skipped: undefined,
    },
  }));

async function write(store: AuditStore, list: AuditEntry[]): Promise<AuditLog> {
  const log = new AuditLog({ store, batchSize: 7 });
  for (const entry of list) log.append(entry);
  await log.flush();
  return log;
}

/** Tamper with the table as its owner can: the append-only triggers off for one statement. */
const byHand = (b: Backend, statement: string) =>
  b.sql(
    `BEGIN; ALTER TABLE audit_log DISABLE TRIGGER USER; ${statement}; ALTER TABLE audit_log ENABLE TRIGGER USER; COMMIT`,
  );

function describeTrail(name: string, open: () => Promise<Backend>) {
  describe(`the audit trail on ${name}`, () => {
    it("chains records as src/audit computes them, and verify holds", async () => {
      const b = await open();
      const log = await write(b.store, entries(20));
      const memory = new MemoryAuditStore();
      await write(memory, entries(20));
      const stored = await b.store.read({ after: 0, limit: 100 });
      expect(stored.map((r) => r.hash)).toEqual(memory.records.map((r) => r.hash));
      expect(stored[0]?.data).toMatchObject({ big: (10n ** 30n).toString(), nul: "ab" });
      expect(await log.verify()).toEqual({
        ok: true,
        records: 20,
        head: { seq: 20, hash: stored[19]?.hash },
      });
      const since = [];
      for await (const record of log.export(new Date(T.getTime() + 15_000))) since.push(record);
      expect(since.map((r) => r.seq)).toEqual([16, 17, 18, 19, 20]);
    });

    it("refuses UPDATE and DELETE: the table is append-only", async () => {
      const b = await open();
      await write(b.store, entries(2));
      await expect(b.sql("UPDATE audit_log SET kind = 'x' WHERE seq = 1")).rejects.toThrow(/append-only/);
      await expect(b.sql("DELETE FROM audit_log WHERE seq = 1")).rejects.toThrow(/append-only/);
    });

    it("a record's data changed by hand: verify names it, changed", async () => {
      const b = await open();
      const log = await write(b.store, entries(10));
      await byHand(b, `UPDATE audit_log SET data = jsonb_set(data, '{amountUsd}', '"9.99"') WHERE seq = 6`);
      expect(await log.verify()).toMatchObject({
        ok: false,
        records: 5,
        firstBad: { seq: 6, problem: "changed", kind: "payment.settled", at: "2026-03-01T12:00:05.000Z" },
      });
    });

    // Found by a black-box run (h48): the hash covers the time to the millisecond, and the column
    // keeps microseconds, so a time moved within its millisecond passed verify.
    it("a record's time moved within its millisecond: verify names it, changed", async () => {
      const b = await open();
      const log = await write(b.store, entries(10));
      await byHand(b, "UPDATE audit_log SET at = at + interval '0.4 milliseconds' WHERE seq = 3");
      expect(await log.verify()).toMatchObject({
        ok: false,
        records: 2,
        firstBad: { seq: 3, problem: "changed", at: "2026-03-01T12:00:02.000Z" },
      });
    });

    it("a record deleted: removed, whether the others keep their seq or are renumbered", async () => {
      const b = await open();
      const log = await write(b.store, entries(10));
      await byHand(b, "DELETE FROM audit_log WHERE seq = 4");
      expect(await log.verify()).toMatchObject({
        ok: false,
        records: 3,
        firstBad: { seq: 4, problem: "removed" },
      });
      await byHand(b, "UPDATE audit_log SET seq = seq - 1 WHERE seq > 4");
      expect(await log.verify()).toMatchObject({
        ok: false,
        records: 3,
        firstBad: { seq: 4, problem: "removed" },
      });
    });

    it("two records swapped: reordered", async () => {
      const b = await open();
      const log = await write(b.store, entries(10));
      await byHand(
        b,
        "UPDATE audit_log SET seq = -7 WHERE seq = 7; UPDATE audit_log SET seq = 7 WHERE seq = 8; UPDATE audit_log SET seq = 8 WHERE seq = -7",
      );
      expect(await log.verify()).toMatchObject({
        ok: false,
        records: 6,
        firstBad: { seq: 7, problem: "reordered" },
      });
    });

    it("appenders of several instances at once make one chain", async () => {
      const b = await open();
      const stores = [b.store, b.another ? await b.another() : b.store];
      const logs = stores.map((store) => new AuditLog({ store, batchSize: 5 }));
      for (let i = 0; i < 60; i++) logs[i % 2]?.append(entries(1, i)[0] as AuditEntry);
      await Promise.all(logs.map((log) => log.flush()));
      const report = await logs[0]?.verify();
      expect(report).toMatchObject({ ok: true, records: 60 });
    });
  });
}

let pgliteImage: Promise<Blob> | undefined;
describeTrail("PGlite", async () => {
  pgliteImage ??= migratedImage();
  const client = new PGlite("memory://", { loadDataDir: await pgliteImage });
  cleanups.push(() => client.close());
  return { store: new PgAuditStore(pgliteQuery(client)), sql: (text) => client.exec(text) };
});

if (databaseUrl) {
  describeTrail("a PostgreSQL server", async () => {
    const schema = `audit_test_${randomUUID().replaceAll("-", "").slice(0, 16)}`;
    const opened: Store[] = [];
    const openOne = async () => {
      const store = await openStore({ databaseUrl, schema });
      opened.push(store);
      return store.audit;
    };
    const store = await openOne();
    const sql = postgres(databaseUrl, { max: 1, onnotice: () => {}, connection: { search_path: schema } });
    cleanups.push(async () => {
      for (const s of opened) await s.close();
      await sql.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await sql.end();
    });
    return { store, sql: (text) => sql.unsafe(text).simple(), another: openOne };
  });
} else {
  describe("the audit trail on a PostgreSQL server", () => {
    it.skip("needs DATABASE_URL (e.g. postgres://postgres@127.0.0.1:5432/test)", () => {});
  });
}
