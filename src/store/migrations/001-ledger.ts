import type { Migration } from "./migration.js";

/** The statuses of migration 1, as shipped (migration 3 widened the check). */
const statusList = ["reserved", "signed", "submitted", "settled", "failed", "unknown", "released"]
  .map((s) => `'${s}'`)
  .join(", ");

export const ledger: Migration = {
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
};
