/**
 * x402: the wire. Asking a service without paying and reading its 402 demand (`probe.ts`), signing
 * an offer into the `X-PAYMENT` header and checking what was signed, and reading the settlement a
 * service returns (`wire.ts`). Everything a paid service sends is hostile: these functions parse,
 * bound and refuse; they never decide whether to pay.
 */
export * from "./probe.js";
export * from "./wire.js";
