/**
 * Run: paying, step by step. `pipeline.ts` takes a quote or a payment from probe to record,
 * `run.ts` (`PaymentRun`) owns one payment's row and moves it only along the state table,
 * `delivery.ts` sends the paid request and reads what came back, `approval.ts` resumes a payment the
 * user answered in the wallet, `reconciler.ts` settles what stayed unclear against the chain,
 * `recovery.ts` rebuilds an answer from the ledger, and `balances.ts` reads wallet balances before
 * signing. The rules it follows are in `../rules`, the world it touches in `../ports` and `../x402`.
 */
export * from "./approval.js";
export * from "./balances.js";
export * from "./delivery.js";
export type { RunHooks } from "./events.js";
export * from "./pipeline.js";
export * from "./reconciler.js";
export * from "./recovery.js";
export * from "./run.js";
