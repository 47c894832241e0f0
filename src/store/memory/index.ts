import type { Store } from "../index.js";
import { MemoryIdempotencyStore } from "./idempotency.js";
import { MemoryLedger } from "./ledger.js";

/**
 * The store in this process's memory: the ledger and the idempotency keys, with the contract of
 * the PostgreSQL store (the same suites run on both) and nothing kept after the process ends.
 * For tests of the payment core that need no database; `close` forgets nothing and frees nothing.
 */
export function openMemoryStore(): Store {
  return {
    kind: "memory",
    ledger: new MemoryLedger(),
    idempotency: new MemoryIdempotencyStore(),
    close: async () => {},
  };
}

export { MemoryIdempotencyStore, MemoryLedger };
