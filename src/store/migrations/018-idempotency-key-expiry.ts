import type { Migration } from "./migration.js";

export const idempotencyKeyExpiry: Migration = {
  id: 18,
  name: "idempotency keys found by their expiry",
  // Keys are kept 24 hours (docs/protocol.md); those past it are deleted a batch at a time as new
  // keys are claimed (src/store/idempotency.ts), which this index lets find without a scan.
  up: (s) => [`CREATE INDEX idempotency_keys_expires_idx ON ${s}.idempotency_keys (expires_at)`],
};
