import { privateKeyToAccount } from "viem/accounts";
import type { WalletRole } from "../types.js";

/**
 * Hardhat's published default accounts (mnemonic "test test test test test test test test test
 * test test junk", path m/44'/60'/0'/0/i). These keys are public test keys known to every EVM
 * developer; they must never hold real funds. Index -> private key.
 */
export const HARDHAT_TEST_KEYS = [
  "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80",
  "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d",
  "0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a",
  "0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6",
  "0x47e179ec197488593b187f80a00eb0da91f1b9d0b13f8733639f19c30a34926a",
  "0x8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba",
  "0x92db14e403b83dfe3df233f83dfa3a0d7096f21ca9b0d6d6b8d88b2b4ec1564e",
] as const satisfies readonly `0x${string}`[];

/** A funded devnet wallet before it is funded: its name, role and starting USDC. */
export interface WalletPlan {
  name: string;
  role: WalletRole;
  /** Starting USDC balance in atomic units (6 decimals). */
  usdcAtomic: bigint;
}

/**
 * The same cast of wallets on both chains. `payer-low` holds $0.001, less than any service
 * costs, for the insufficient-balance path. `user` is a funded wallet whose key the service does
 * not hold: its payments are approved in the user's own wallet (docs/protocol.md, "Approval").
 */
export const WALLET_PLAN: readonly WalletPlan[] = [
  { name: "payer", role: "payer", usdcAtomic: 1_000_000_000n },
  { name: "payer-2", role: "payer", usdcAtomic: 1_000_000_000n },
  { name: "payer-low", role: "payer-low", usdcAtomic: 1_000n },
  { name: "merchant", role: "merchant", usdcAtomic: 0n },
  { name: "facilitator", role: "facilitator", usdcAtomic: 0n },
  { name: "user", role: "user", usdcAtomic: 1_000_000_000n },
];

/** Index 0 deploys the token and mints; it is not a demo wallet. */
export const DEPLOYER_KEY = HARDHAT_TEST_KEYS[0];

/** The EVM wallets of {@link WALLET_PLAN}, on Hardhat accounts 1..n. */
export function evmWallets(): Array<WalletPlan & { privateKey: `0x${string}`; address: `0x${string}` }> {
  return WALLET_PLAN.map((plan, i) => {
    const privateKey = HARDHAT_TEST_KEYS[i + 1];
    if (!privateKey) throw new Error(`no Hardhat test key for wallet ${plan.name}`);
    return { ...plan, privateKey, address: privateKeyToAccount(privateKey).address };
  });
}
