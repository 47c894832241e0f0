import type { Migration } from "./migration.js";

export const idempotencyLeases: Migration = {
  id: 7,
  name: "idempotency leases",
  // An in-progress idempotency key is held by its owner (one attempt) until `lease_until`,
  // renewed while the attempt runs; a lapsed lease (the owner died) is taken over by the next
  // claim, which answers from the ledger: `request_id` names the payments the attempt made.
  // Independent of migrations 5 and 6; a key claimed before this one has no lease and counts as lapsed.
  up: (s) => [
    `ALTER TABLE ${s}.idempotency_keys ADD COLUMN owner text`,
    `ALTER TABLE ${s}.idempotency_keys ADD COLUMN lease_until timestamptz`,
    `ALTER TABLE ${s}.idempotency_keys ADD COLUMN request_id text`,
  ],
};
