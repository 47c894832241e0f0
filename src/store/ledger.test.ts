import { randomUUID } from "node:crypto";
import postgres from "postgres";
import { describe, it } from "vitest";
import { openMemoryStore, openStore } from "./index.js";
import { describeLedger } from "./testing/ledger-suite.js";

const databaseUrl = process.env.DATABASE_URL;

describeLedger("PGlite (in memory)", () => openStore({ dataDir: "memory://" }));
describeLedger("memory (no database)", async () => openMemoryStore());

if (databaseUrl) {
  const schema = `ledger_test_${randomUUID().replaceAll("-", "").slice(0, 16)}`;
  describeLedger(
    "PostgreSQL server",
    () => openStore({ databaseUrl, schema }),
    async () => {
      const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
      await sql.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await sql.end();
    },
  );
} else {
  describe("ledger on PostgreSQL server", () => {
    it.skip("needs DATABASE_URL (e.g. postgres://postgres@127.0.0.1:5432/test)", () => {});
  });
}
