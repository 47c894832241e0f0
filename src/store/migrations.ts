import { sql } from "drizzle-orm";
import type { PgDatabase, PgQueryResultHKT } from "drizzle-orm/pg-core";
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

/** The statuses of migration 1, as shipped (migration 3 widened the check). */
const statusList = ["reserved", "signed", "submitted", "settled", "failed", "unknown", "released"]
  .map((s) => `'${s}'`)
  .join(", ");

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
  {
    id: 2,
    name: "reserve in one call",
    // Check-and-reserve as one function call: one round trip instead of five statements. Each
    // statement of a VOLATILE plpgsql function takes a new snapshot, so the sums are read after the
    // wallet's budget row is locked and see every reservation committed before (READ COMMITTED).
    // The rule is checkSpend's (src/payments/policy.ts), remaining amounts clamped at zero; the
    // ledger suite holds the two to the same answers.
    up: (s) => [
      `CREATE FUNCTION ${s}.reserve_payment(
        p_payment_id text, p_wallet text, p_request_id text, p_service text, p_network text,
        p_asset text, p_pay_to text, p_amount numeric, p_requirement jsonb, p_authorization jsonb,
        p_status text, p_history jsonb, p_now timestamptz, p_since timestamptz,
        p_per_transaction numeric, p_per_request numeric, p_daily numeric, p_spent text[]
      ) RETURNS TABLE (outcome text, today text, this_request text)
      LANGUAGE plpgsql VOLATILE AS $fn$
      DECLARE
        v_today numeric;
        v_request numeric;
      BEGIN
        INSERT INTO ${s}.wallet_budgets (wallet, created_at) VALUES (p_wallet, p_now)
          ON CONFLICT (wallet) DO UPDATE SET wallet = excluded.wallet;
        SELECT coalesce(sum(p.amount) FILTER (WHERE p.wallet = p_wallet AND p.created_at > p_since), 0),
               coalesce(sum(p.amount) FILTER (WHERE p.request_id = p_request_id), 0)
          INTO v_today, v_request
          FROM ${s}.payments p
          WHERE ((p.wallet = p_wallet AND p.created_at > p_since) OR p.request_id = p_request_id)
            AND p.status = ANY (p_spent);
        IF p_amount > greatest(p_per_transaction, 0)
           OR p_amount > greatest(p_per_request - v_request, 0)
           OR p_amount > greatest(p_daily - v_today, 0) THEN
          RETURN QUERY SELECT 'refused', v_today::text, v_request::text;
          RETURN;
        END IF;
        INSERT INTO ${s}.payments (payment_id, status, history, wallet, request_id, service, network,
            asset, pay_to, amount, requirement, authorization_data, created_at, updated_at)
          VALUES (p_payment_id, p_status, p_history, p_wallet, p_request_id, p_service, p_network,
            p_asset, p_pay_to, p_amount, p_requirement, p_authorization, p_now, p_now)
          ON CONFLICT (payment_id) DO NOTHING;
        IF NOT FOUND THEN
          RETURN QUERY SELECT 'duplicate', v_today::text, v_request::text;
          RETURN;
        END IF;
        RETURN QUERY SELECT 'reserved', v_today::text, v_request::text;
      END
      $fn$`,
    ],
  },
  {
    id: 3,
    name: "approval in the user's wallet",
    // A payment can wait for the user's wallet (docs/payments.md, "Approval"): it is stored with
    // what the wallet signs, the caller it belongs to and when it expires, and holds no budget
    // (`awaiting_approval` is not among the spent statuses). Approving it is one call of
    // `approve_payment`: the same locks and sums as `reserve_payment`, then the row moves to
    // `submitted` with its intent, only if it is still awaiting approval.
    up: (s) => [
      `ALTER TABLE ${s}.payments DROP CONSTRAINT IF EXISTS payments_status_check`,
      `ALTER TABLE ${s}.payments ADD CONSTRAINT payments_status_check CHECK (status IN (
        'reserved', 'signed', 'submitted', 'settled', 'failed', 'unknown', 'released',
        'awaiting_approval', 'rejected', 'expired'))`,
      `ALTER TABLE ${s}.payments ADD COLUMN approval jsonb`,
      `ALTER TABLE ${s}.payments ADD COLUMN caller text`,
      `ALTER TABLE ${s}.payments ADD COLUMN expires_at timestamptz`,
      `CREATE FUNCTION ${s}.approve_payment(
        p_payment_id text, p_authorization jsonb, p_history jsonb, p_now timestamptz,
        p_since timestamptz, p_per_transaction numeric, p_per_request numeric, p_daily numeric,
        p_spent text[]
      ) RETURNS TABLE (outcome text, today text, this_request text)
      LANGUAGE plpgsql VOLATILE AS $fn$
      DECLARE
        v_wallet text;
        v_request_id text;
        v_amount numeric;
        v_status text;
        v_expires timestamptz;
        v_today numeric;
        v_request numeric;
      BEGIN
        SELECT p.wallet INTO v_wallet FROM ${s}.payments p WHERE p.payment_id = p_payment_id;
        IF NOT FOUND THEN
          RETURN QUERY SELECT 'missing', '0', '0';
          RETURN;
        END IF;
        INSERT INTO ${s}.wallet_budgets (wallet, created_at) VALUES (v_wallet, p_now)
          ON CONFLICT (wallet) DO UPDATE SET wallet = excluded.wallet;
        SELECT p.status, p.request_id, p.amount, p.expires_at
          INTO v_status, v_request_id, v_amount, v_expires
          FROM ${s}.payments p WHERE p.payment_id = p_payment_id FOR UPDATE;
        IF v_status <> 'awaiting_approval' THEN
          RETURN QUERY SELECT 'status:' || v_status, '0', '0';
          RETURN;
        END IF;
        IF v_expires IS NOT NULL AND v_expires <= p_now THEN
          RETURN QUERY SELECT 'status:expired', '0', '0';
          RETURN;
        END IF;
        SELECT coalesce(sum(p.amount) FILTER (WHERE p.wallet = v_wallet AND p.created_at > p_since), 0),
               coalesce(sum(p.amount) FILTER (WHERE p.request_id = v_request_id), 0)
          INTO v_today, v_request
          FROM ${s}.payments p
          WHERE ((p.wallet = v_wallet AND p.created_at > p_since) OR p.request_id = v_request_id)
            AND p.status = ANY (p_spent);
        IF v_amount > greatest(p_per_transaction, 0)
           OR v_amount > greatest(p_per_request - v_request, 0)
           OR v_amount > greatest(p_daily - v_today, 0) THEN
          RETURN QUERY SELECT 'refused', v_today::text, v_request::text;
          RETURN;
        END IF;
        UPDATE ${s}.payments SET status = 'submitted', history = history || p_history,
            authorization_data = p_authorization, updated_at = p_now
          WHERE payment_id = p_payment_id;
        RETURN QUERY SELECT 'reserved', v_today::text, v_request::text;
      END
      $fn$`,
    ],
  },
  {
    id: 4,
    name: "reserve with the budget it read; one-call moves",
    // Speed (docs/benchmarks.md, "Paid path"): the budget meter comes from the reservation's own
    // sums instead of a read of its own, and a status move is one function call whose plans stay
    // prepared. `reserve_payment` gains an overload (one more argument, the pending statuses) that
    // also returns the sums split into spent and pending; the old one stays for processes of the
    // previous version still running against this database.
    up: (s) => [
      `CREATE FUNCTION ${s}.reserve_payment(
        p_payment_id text, p_wallet text, p_request_id text, p_service text, p_network text,
        p_asset text, p_pay_to text, p_amount numeric, p_requirement jsonb, p_authorization jsonb,
        p_status text, p_history jsonb, p_now timestamptz, p_since timestamptz,
        p_per_transaction numeric, p_per_request numeric, p_daily numeric, p_spent text[],
        p_pending text[]
      ) RETURNS TABLE (outcome text, day_spent text, day_pending text, request_spent text,
        request_pending text)
      LANGUAGE plpgsql VOLATILE AS $fn$
      DECLARE
        v_day_spent numeric;
        v_day_pending numeric;
        v_request_spent numeric;
        v_request_pending numeric;
        v_outcome text := 'reserved';
      BEGIN
        INSERT INTO ${s}.wallet_budgets (wallet, created_at) VALUES (p_wallet, p_now)
          ON CONFLICT (wallet) DO UPDATE SET wallet = excluded.wallet;
        SELECT
          coalesce(sum(p.amount) FILTER (WHERE p.wallet = p_wallet AND p.created_at > p_since
            AND NOT p.status = ANY (p_pending)), 0),
          coalesce(sum(p.amount) FILTER (WHERE p.wallet = p_wallet AND p.created_at > p_since
            AND p.status = ANY (p_pending)), 0),
          coalesce(sum(p.amount) FILTER (WHERE p.request_id = p_request_id
            AND NOT p.status = ANY (p_pending)), 0),
          coalesce(sum(p.amount) FILTER (WHERE p.request_id = p_request_id
            AND p.status = ANY (p_pending)), 0)
          INTO v_day_spent, v_day_pending, v_request_spent, v_request_pending
          FROM ${s}.payments p
          WHERE ((p.wallet = p_wallet AND p.created_at > p_since) OR p.request_id = p_request_id)
            AND p.status = ANY (p_spent);
        IF p_amount > greatest(p_per_transaction, 0)
           OR p_amount > greatest(p_per_request - v_request_spent - v_request_pending, 0)
           OR p_amount > greatest(p_daily - v_day_spent - v_day_pending, 0) THEN
          v_outcome := 'refused';
        ELSE
          INSERT INTO ${s}.payments (payment_id, status, history, wallet, request_id, service,
              network, asset, pay_to, amount, requirement, authorization_data, created_at, updated_at)
            VALUES (p_payment_id, p_status, p_history, p_wallet, p_request_id, p_service, p_network,
              p_asset, p_pay_to, p_amount, p_requirement, p_authorization, p_now, p_now)
            ON CONFLICT (payment_id) DO NOTHING;
          IF NOT FOUND THEN
            v_outcome := 'duplicate';
          END IF;
        END IF;
        RETURN QUERY SELECT v_outcome, v_day_spent::text, v_day_pending::text,
          v_request_spent::text, v_request_pending::text;
      END
      $fn$`,
      // Move a payment to p_to if its status is one of p_from, appending p_entry to its history
      // and setting the facts given (NULL keeps a column as it is). Returns the new status, or
      // NULL when no row moved (missing, or in another status: the caller says which).
      `CREATE FUNCTION ${s}.move_payment(
        p_payment_id text, p_to text, p_from text[], p_entry jsonb, p_tx_hash text, p_payer text,
        p_error text, p_authorization jsonb, p_now timestamptz
      ) RETURNS text
      LANGUAGE plpgsql VOLATILE AS $fn$
      DECLARE
        v_status text;
      BEGIN
        UPDATE ${s}.payments SET status = p_to, history = history || p_entry,
            tx_hash = coalesce(p_tx_hash, tx_hash), payer = coalesce(p_payer, payer),
            error = coalesce(p_error, error),
            authorization_data = coalesce(p_authorization, authorization_data),
            updated_at = p_now,
            settled_at = CASE WHEN p_to = 'settled' THEN p_now ELSE settled_at END
          WHERE payment_id = p_payment_id AND status = ANY (p_from)
          RETURNING status INTO v_status;
        RETURN v_status;
      END
      $fn$`,
    ],
  },
  {
    id: 6,
    name: "idempotency leases",
    // An in-progress idempotency key is held by its owner (one attempt) until `lease_until`,
    // renewed while the attempt runs; a lapsed lease (the owner died) is taken over by the next
    // claim, which answers from the ledger: `request_id` names the payments the attempt made.
    // Independent of migration 5; a key claimed before this one has no lease and counts as lapsed.
    up: (s) => [
      `ALTER TABLE ${s}.idempotency_keys ADD COLUMN owner text`,
      `ALTER TABLE ${s}.idempotency_keys ADD COLUMN lease_until timestamptz`,
      `ALTER TABLE ${s}.idempotency_keys ADD COLUMN request_id text`,
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
