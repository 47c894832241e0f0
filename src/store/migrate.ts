import { sql } from "drizzle-orm";
import type { PgDatabase, PgQueryResultHKT } from "drizzle-orm/pg-core";
import { MIGRATIONS, type Migration } from "./migrations/index.js";
import { schemaMigrations } from "./schema.js";

/**
 * Schema migrations (plain SQL, one module each in src/store/migrations/) applied in order on open.
 * A `schema_migrations` table records what ran; a transaction-scoped advisory lock makes two
 * processes opening at once take turns, and everything runs in that one transaction, so a failed
 * migration leaves nothing half-applied.
 */

export type Db = PgDatabase<PgQueryResultHKT>;

/** Quote a Postgres identifier. */
export function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/**
 * Apply pending migrations to `schema`; returns the ids applied now (empty when up to date).
 * `migrations`: all of them, unless a test builds a database as an earlier version left it.
 */
export async function migrate(
  db: Db,
  schema: string,
  migrations: readonly Migration[] = MIGRATIONS,
): Promise<number[]> {
  const s = quoteIdent(schema);
  return db.transaction(async (tx) => {
    await tx.execute(sql`SELECT pg_advisory_xact_lock(hashtext(${`x402-ledger-migrations:${schema}`}))`);
    await tx.execute(sql.raw(`CREATE SCHEMA IF NOT EXISTS ${s}`));
    // The tables are unqualified in schema.ts: within this transaction they must mean `schema`.
    await tx.execute(sql.raw(`SET LOCAL search_path TO ${s}`));
    await tx.execute(
      sql.raw(`CREATE TABLE IF NOT EXISTS ${s}.schema_migrations (
        id integer PRIMARY KEY,
        name text NOT NULL,
        applied_at timestamptz NOT NULL
      )`),
    );
    const done = new Set(
      (await tx.select({ id: schemaMigrations.id }).from(schemaMigrations)).map((r) => r.id),
    );
    const applied: number[] = [];
    for (const migration of migrations) {
      if (done.has(migration.id)) continue;
      for (const statement of migration.up(s)) await tx.execute(sql.raw(statement));
      await tx
        .insert(schemaMigrations)
        .values({ id: migration.id, name: migration.name, appliedAt: new Date() });
      applied.push(migration.id);
    }
    return applied;
  });
}
