/**
 * The store in this process's memory: the ledger and the idempotency keys, with the contract of
 * the PostgreSQL store (the same suites run on both) and nothing kept after the process ends.
 * `openMemoryStore` (src/store/index.ts) hands them out as a `Store`.
 */

export { MEMORY_DELIVERED_MAX, MemoryDeliveredData } from "./delivered.js";
export { MemoryIdempotencyStore } from "./idempotency.js";
export { MemoryLedger } from "./ledger.js";
