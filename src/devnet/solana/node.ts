import { createRequire } from "node:module";
import { getAddressEncoder } from "@solana/kit";
import { type SolanaWallet, solanaKeypair, solanaWallets } from "./keys.js";

/** Solana devnet's CAIP-2 id: `@x402/svm` accepts only the public clusters, so we pose as devnet. */
export const SOLANA_NETWORK = "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1" as const;
/** Circle's devnet USDC mint; planting our mint here lets x402's default asset rules apply. */
export const SOLANA_USDC_MINT = "4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU";
export const TOKEN_PROGRAM = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA";
const SURFPOOL_PACKAGE = "@solana/surfpool-linux-x64-gnu";
const SOL = 1_000_000_000;
/** Rent-exempt minimum for an 82-byte SPL mint account. */
const MINT_RENT_LAMPORTS = 1_461_600;

/** The subset of Surfpool's native `Surfnet` class the devnet uses. */
interface NativeSurfnet {
  readonly rpcUrl: string;
  readonly wsUrl: string;
  fundSolMany(accounts: Array<{ address: string; lamports: number }>): void;
  setTokenBalance(owner: string, mint: string, amount: number, tokenProgram?: string): void;
  setAccount(address: string, lamports: number, data: number[], owner: string): void;
  stop(): void;
}

interface SurfnetClass {
  start(): NativeSurfnet;
}

/** A running Surfpool node with the USDC mint planted and the wallets funded. */
export interface SolanaNode {
  rpcUrl: string;
  wsUrl: string;
  wallets: SolanaWallet[];
  stop(): Promise<void>;
}

/**
 * Loads Surfpool's embedded node. It ships only as an optional linux-x64-gnu package, so on other
 * platforms this returns the reason instead of throwing and the devnet runs EVM only.
 */
export function loadSurfpool(packageName = SURFPOOL_PACKAGE): { Surfnet: SurfnetClass } | { reason: string } {
  try {
    const require = createRequire(import.meta.url);
    const native = require(packageName) as { Surfnet?: SurfnetClass };
    if (typeof native.Surfnet?.start !== "function") return { reason: `${packageName} has no Surfnet.start` };
    return { Surfnet: native.Surfnet };
  } catch (error) {
    const message = error instanceof Error ? error.message.split("\n")[0] : String(error);
    return { reason: `cannot load ${packageName} (${process.platform}-${process.arch}): ${message}` };
  }
}

/**
 * Starts an offline Surfpool node (RPC and WebSocket on loopback, random ports), plants a
 * 6-decimal USDC mint at the devnet address, gives every wallet SOL for fees and creates every
 * wallet's USDC token account (the merchant's must exist before anyone pays it).
 */
export async function startSolanaNode(Surfnet: SurfnetClass): Promise<SolanaNode> {
  const wallets = await solanaWallets();
  const mintAuthority = await solanaKeypair("mint-authority");
  const surfnet = Surfnet.start();
  try {
    surfnet.setAccount(
      SOLANA_USDC_MINT,
      MINT_RENT_LAMPORTS,
      mintAccountData(mintAuthority.address),
      TOKEN_PROGRAM,
    );
    surfnet.fundSolMany(wallets.map((w) => ({ address: w.address, lamports: 100 * SOL })));
    for (const wallet of wallets) {
      surfnet.setTokenBalance(wallet.address, SOLANA_USDC_MINT, Number(wallet.usdcAtomic), TOKEN_PROGRAM);
    }
  } catch (error) {
    surfnet.stop();
    throw error;
  }
  let stopped = false;
  return {
    rpcUrl: surfnet.rpcUrl,
    wsUrl: surfnet.wsUrl,
    wallets,
    async stop() {
      if (stopped) return;
      stopped = true;
      surfnet.stop();
    },
  };
}

/** SPL Token mint layout (82 bytes): authority option, supply, decimals, initialized, freeze option. */
function mintAccountData(mintAuthority: string): number[] {
  const data = new Uint8Array(82);
  const view = new DataView(data.buffer);
  view.setUint32(0, 1, true);
  data.set(
    getAddressEncoder().encode(
      mintAuthority as Parameters<ReturnType<typeof getAddressEncoder>["encode"]>[0],
    ),
    4,
  );
  view.setBigUint64(36, 10n ** 15n, true);
  data[44] = 6;
  data[45] = 1;
  return Array.from(data);
}
