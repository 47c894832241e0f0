import { type ChainName, parseAddress } from "../chains/index.js";

/** A validated wallet address, canonical (EVM checksummed), and the chain family it belongs to. */
export interface Wallet {
  chain: ChainName;
  address: string;
}

export type WalletParse = { ok: true; wallet: Wallet } | { ok: false; reason: string };

/**
 * A wallet address of any chain family this service pays on: each family checks its own format
 * (EVM: 0x + 40 hex, EIP-55 checksum when mixed case; Solana: base58 of 32 bytes on the ed25519
 * curve). See `src/chains`.
 */
export function parseWallet(input: string): WalletParse {
  const parsed = parseAddress(input);
  return parsed.ok ? { ok: true, wallet: { chain: parsed.chain, address: parsed.address } } : parsed;
}
