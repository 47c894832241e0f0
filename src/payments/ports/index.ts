/**
 * Ports: what payments need from the world, as interfaces. The `Ledger` (every payment's row and
 * the budget checks that must be atomic with it; src/store implements it on PGlite/PostgreSQL), the
 * server-held signers (`signers.ts`: keys never leave it), what an awaiting approval row keeps
 * (`stored-approval.ts`) and what a payment approved on the page delivered for its caller
 * (`delivered.ts`), and who pays within what (`payer.ts`, `Payer`). Nothing here decides or runs a
 * payment.
 */
export * from "./delivered.js";
export * from "./events.js";
export * from "./ledger.js";
export * from "./pauses.js";
export * from "./payer.js";
export * from "./signers.js";
export * from "./stored-approval.js";
export * from "./tabs.js";
