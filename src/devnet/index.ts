/**
 * The local, fully offline x402 network (see docs/devnet.md). This file is the folder's only
 * public face: code outside src/devnet imports from here and nothing else.
 */
export { SOLANA_SLOT_TIME_MS } from "./solana/node.js";
export { startDevnet } from "./start.js";
export type {
  Devnet,
  DevnetManifest,
  DevnetOptions,
  DevnetServiceInfo,
  Faults,
  WalletRole,
} from "./types.js";
