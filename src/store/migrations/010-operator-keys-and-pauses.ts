import type { Migration } from "./migration.js";

export const operatorKeysAndPauses: Migration = {
  id: 10,
  name: "operator keys and pauses",
  // Operator keys (a SHA-256 of each token, never the token) and the kill switch's pauses
  // (docs/deploy.md#operating-it); every instance reads both whole about twice a second.
  up: (s) => [
    `CREATE TABLE ${s}.operator_keys (
        name text PRIMARY KEY,
        token_hash text NOT NULL UNIQUE,
        scopes jsonb NOT NULL,
        wallets jsonb,
        per_transaction bigint,
        per_request bigint,
        daily bigint,
        created_at timestamptz NOT NULL,
        created_by text NOT NULL,
        expires_at timestamptz,
        revoked_at timestamptz,
        rotated_at timestamptz
      )`,
    `CREATE TABLE ${s}.operator_pauses (
        target text PRIMARY KEY,
        scope text NOT NULL,
        key_name text,
        reason text NOT NULL,
        paused_by text NOT NULL,
        since timestamptz NOT NULL
      )`,
  ],
};
