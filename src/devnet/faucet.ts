/**
 * The devnet's faucet: test runs that share one devnet fund wallets of their own (fresh keys) so
 * that no test depends on balances another left behind. Reached over the control server
 * (`POST /__devnet/fund`, bearer dev token); the body is checked like any untrusted input.
 */
import { getBase58Encoder } from "@solana/kit";
import type { EvmChain } from "./evm/chain.js";
import type { SolanaNode } from "./solana/node.js";

export interface FundRequest {
  evm: Array<{ address: `0x${string}`; usdcAtomic: bigint }>;
  solana: Array<{ address: string; usdcAtomic: bigint }>;
}

/** At most this many wallets per request, and this much USDC (atomic) per wallet: $1,000,000. */
export const FAUCET_MAX_WALLETS = 32;
export const FAUCET_MAX_ATOMIC = 1_000_000_000_000n;

/** Checks an untrusted body `{ evm?: [{address, usdcAtomic}], solana?: [...] }`; throws on a bad one. */
export function parseFundRequest(input: unknown): FundRequest {
  if (typeof input !== "object" || input === null || Array.isArray(input))
    throw new TypeError("the body must be an object");
  const raw = input as Record<string, unknown>;
  for (const key of Object.keys(raw))
    if (key !== "evm" && key !== "solana") throw new TypeError(`unknown field "${key}"`);
  const evm = entries(raw.evm, "evm").map(({ address, usdcAtomic }) => {
    if (!/^0x[0-9a-fA-F]{40}$/.test(address)) throw new TypeError(`not an EVM address: ${address}`);
    return { address: address as `0x${string}`, usdcAtomic };
  });
  const solana = entries(raw.solana, "solana").map(({ address, usdcAtomic }) => {
    if (!isSolanaAddress(address)) throw new TypeError(`not a Solana address: ${address}`);
    return { address, usdcAtomic };
  });
  if (evm.length + solana.length > FAUCET_MAX_WALLETS)
    throw new TypeError(`at most ${FAUCET_MAX_WALLETS} wallets per request`);
  return { evm, solana };
}

function entries(value: unknown, chain: string): Array<{ address: string; usdcAtomic: bigint }> {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw new TypeError(`${chain} must be an array`);
  return value.map((item: unknown) => {
    const entry = (typeof item === "object" && item !== null ? item : {}) as Record<string, unknown>;
    const { address, usdcAtomic } = entry;
    if (typeof address !== "string") throw new TypeError(`${chain}: address must be a string`);
    if (typeof usdcAtomic !== "string" || !/^\d{1,13}$/.test(usdcAtomic))
      throw new TypeError(`${chain}: usdcAtomic must be a decimal string`);
    const amount = BigInt(usdcAtomic);
    if (amount > FAUCET_MAX_ATOMIC) throw new TypeError(`${chain}: at most ${FAUCET_MAX_ATOMIC} per wallet`);
    return { address, usdcAtomic: amount };
  });
}

function isSolanaAddress(address: string): boolean {
  if (!/^[1-9A-HJ-NP-Za-km-z]{32,44}$/.test(address)) return false;
  try {
    return getBase58Encoder().encode(address).length === 32;
  } catch {
    return false;
  }
}

/** The faucet behind `POST /__devnet/fund`: gas and USDC on the chains that run. */
export function createFaucet(
  evm: EvmChain,
  solana: SolanaNode | null,
): (request: FundRequest) => Promise<void> {
  return async ({ evm: evmWallets, solana: solanaWallets }) => {
    for (const w of evmWallets) await evm.fund(w.address, w.usdcAtomic);
    if (solanaWallets.length && !solana) throw new Error("Solana is not running");
    for (const w of solanaWallets) await solana?.fund(w.address, w.usdcAtomic);
  };
}
