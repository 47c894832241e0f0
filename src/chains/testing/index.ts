/**
 * Test support for the chain port: a toy chain family (balances in memory, deterministic, with
 * switches for unclear, late and failed settlement). Product code never imports this folder.
 */

export { TRANSFER_WITH_AUTHORIZATION_TYPES, transferWithAuthorization } from "./eip3009.js";
export { type Landing, type Settlement, type ToyAuthorization, ToyChain } from "./toy-chain.js";
export { createToyFamily, TOY_NAMESPACE, TOY_NETWORK, TOY_USDC, type ToyKey } from "./toy-family.js";
