import { createHash } from "node:crypto";
import { createKeyPairSignerFromPrivateKeyBytes, getAddressEncoder } from "@solana/kit";
import { WALLET_PLAN, type WalletPlan } from "../evm/accounts.js";

/**
 * Seeds of the devnet's Solana keypairs. Committed on purpose: like Hardhat's accounts these
 * are public test keys, so every run (and every developer) gets the same addresses.
 */
export const SOLANA_SEED_PREFIX = "x402-devnet/solana/v1/";

/** A Solana devnet wallet with its deterministic keypair. */
export interface SolanaWallet extends WalletPlan {
  address: string;
  /** 64 bytes: the 32-byte ed25519 seed followed by the 32-byte public key. */
  secretKey: Uint8Array;
}

/** Derives the 32-byte ed25519 private key of a named devnet wallet. */
export function solanaSeed(name: string): Uint8Array {
  return new Uint8Array(createHash("sha256").update(`${SOLANA_SEED_PREFIX}${name}`).digest());
}

export async function solanaKeypair(name: string): Promise<{ address: string; secretKey: Uint8Array }> {
  const seed = solanaSeed(name);
  const signer = await createKeyPairSignerFromPrivateKeyBytes(seed);
  const secretKey = new Uint8Array(64);
  secretKey.set(seed, 0);
  secretKey.set(getAddressEncoder().encode(signer.address), 32);
  return { address: signer.address, secretKey };
}

/** The wallets of {@link WALLET_PLAN} on Solana. */
export async function solanaWallets(): Promise<SolanaWallet[]> {
  return Promise.all(WALLET_PLAN.map(async (plan) => ({ ...plan, ...(await solanaKeypair(plan.name)) })));
}
