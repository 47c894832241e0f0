import { sql } from "drizzle-orm";
import type { PgDatabase, PgQueryResultHKT } from "drizzle-orm/pg-core";
import { LEDGER_STATUSES } from "../payments/state.js";
import { schemaMigrations } from "./schema.js";

/**
 * Schema migrations as plain SQL, applied in order on open. A `schema_migrations` table records
 * what ran; a transaction-scoped advisory lock makes two processes opening at once take turns, and
 * everything runs in that one transaction, so a failed migration leaves nothing half-applied.
 * Append new migrations; never edit one that has shipped.
 */

export type Db = PgDatabase<PgQueryResultHKT>;

interface Migration {
  id: number;
  name: string;
  /** Statements, given the quoted schema name to qualify objects with. */
  up: (schema: string) => string[];
}

const statusList = LEDGER_STATUSES.map((s) => `'${s}'`).join(", ");

export const MIGRATIONS: readonly Migration[] = [
  {
    id: 1,
    name: "ledger",
    up: (s) => [
      `CREATE TABLE ${s}.wallet_budgets (
        wallet text PRIMARY KEY,
        created_at timestamptz NOT NULL
      )`,
      `CREATE TABLE ${s}.payments (
        payment_id text PRIMARY KEY,
        status text NOT NULL CHECK (status IN (${statusList})),
        history jsonb NOT NULL,
        wallet text NOT NULL,
        request_id text NOT NULL,
        service text NOT NULL,
        network text NOT NULL,
        asset text NOT NULL,
        pay_to text NOT NULL,
        amount numeric(78,0) NOT NULL CHECK (amount >= 0),
        requirement jsonb NOT NULL,
        tx_hash text,
        payer text,
        error text,
        authorization_data jsonb,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL,
        settled_at timestamptz
      )`,
      `CREATE INDEX payments_wallet_created_idx ON ${s}.payments (wallet, created_at)`,
      `CREATE INDEX payments_request_idx ON ${s}.payments (request_id)`,
      `CREATE INDEX payments_status_idx ON ${s}.payments (status)`,
      `CREATE TABLE ${s}.idempotency_keys (
        key text PRIMARY KEY,
        wallet text,
        fingerprint text NOT NULL,
        state text NOT NULL CHECK (state IN ('in-progress', 'complete')),
        response jsonb,
        created_at timestamptz NOT NULL,
        expires_at timestamptz NOT NULL
      )`,
    ],
  },
];

/** Quote a Postgres identifier. */
export function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** Apply pending migrations to `schema`; returns the ids applied now (empty when up to date). */
export async function migrate(db: Db, schema: string): Promise<number[]> {
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
    for (const migration of MIGRATIONS) {
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
