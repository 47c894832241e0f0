import type { Migration } from "./migration.js";

export const deliveredAnswers: Migration = {
  id: 9,
  name: "answers delivered after an approval on the page",
  // One row per payment approved on the approval page: a hash of the wallet's answer (replays)
  // and the service's answer for the payment's caller, read for 24 h (src/payments/ports/delivered.ts).
  up: (s) => [
    `CREATE TABLE ${s}.delivered_data (
        payment_id text PRIMARY KEY,
        answer_hash text NOT NULL,
        data jsonb,
        kept_at timestamptz NOT NULL
      )`,
    `CREATE INDEX delivered_data_kept_at_idx ON ${s}.delivered_data (kept_at)`,
  ],
};
