/**
 * Test support for the payment core: a toy x402 service and the core wired on the memory ledger
 * and the toy chain family, for unit tests. Product code never imports this folder.
 */
export * from "./toy-service.js";
export * from "./toy-world.js";
