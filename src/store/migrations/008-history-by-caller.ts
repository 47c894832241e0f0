import type { Migration } from "./migration.js";

export const historyByCaller: Migration = {
  id: 8,
  name: "payment history by caller",
  // GET /api/payments lists a caller's payments newest first, paged by (created_at, payment_id).
  up: (s) => [
    `CREATE INDEX payments_caller_created_idx ON ${s}.payments (caller, created_at DESC, payment_id DESC)`,
  ],
};
