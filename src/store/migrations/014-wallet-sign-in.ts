import type { Migration } from "./migration.js";

export const walletSignIn: Migration = {
  id: 14,
  name: "wallet sign-in nonces and sessions",
  // Signing in with a wallet (src/signin): a nonce is taken once (a DELETE ... RETURNING), a
  // session is found by its token's SHA-256; each write drops the expired rows through expires_at.
  // A wallet's session lists the payments made from it on migration 1's (wallet, created_at) index.
  up: (s) => [
    `CREATE TABLE ${s}.signin_nonces (
        nonce text PRIMARY KEY,
        origin text NOT NULL,
        address text NOT NULL,
        chain_id text NOT NULL,
        issued_at timestamptz NOT NULL,
        expires_at timestamptz NOT NULL
      )`,
    `CREATE INDEX signin_nonces_expires_idx ON ${s}.signin_nonces (expires_at)`,
    `CREATE TABLE ${s}.wallet_sessions (
        token_hash text PRIMARY KEY,
        wallet text NOT NULL,
        chain_id text NOT NULL,
        created_at timestamptz NOT NULL,
        expires_at timestamptz NOT NULL
      )`,
    `CREATE INDEX wallet_sessions_expires_idx ON ${s}.wallet_sessions (expires_at)`,
  ],
};
