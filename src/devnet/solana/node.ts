import { getAddressEncoder } from "@solana/kit";
import { type SolanaWallet, solanaKeypair, solanaWallets } from "./keys.js";
import { type LiteSvmBinding, loadLiteSvm } from "./litesvm.js";
import { startLocalNode } from "./local-node.js";

/** Solana devnet's CAIP-2 id: `@x402/svm` accepts only the public clusters, so we pose as devnet. */
export const SOLANA_NETWORK = "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1" as const;
/** Circle's devnet USDC mint; planting our mint here lets x402's default asset rules apply. */
export const SOLANA_USDC_MINT = "4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU";
export const TOKEN_PROGRAM = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA";
const SOL = 1_000_000_000;
/** Rent-exempt minimum for an 82-byte SPL mint account. */
const MINT_RENT_LAMPORTS = 1_461_600;

/** Options of {@link startSolanaNode}; the defaults are what `npm start` runs. */
export interface SolanaNodeOptions {
  /** Slot time in ms. Default {@link DEFAULT_SLOT_TIME_MS}. */
  slotTimeMs?: number;
  /**
   * History the LiteSVM node keeps (docs/devnet.md, "How long it lasts"): every transaction of
   * the last {@link DEFAULT_HISTORY_SECONDS}, at most {@link DEFAULT_HISTORY_MAX_TRANSACTIONS}.
   */
  historySeconds?: number;
  historyMaxTransactions?: number;
}

/**
 * How long the LiteSVM node keeps a landed transaction: five times what the service takes to
 * resolve an unclear payment (its reconciler sweeps every 30 s; a payment that never landed is
 * provably failed about 3 minutes after signing), so a landed payment is never dropped before it
 * is found while the service runs. Longer only grows the devnet's memory during a long run
 * (docs/devnet.md, "How long it lasts").
 */
export const DEFAULT_HISTORY_SECONDS = 900;
/** ... and at most this many (about 1.5-2 KB each): a bound on memory whatever the rate. */
export const DEFAULT_HISTORY_MAX_TRANSACTIONS = 5_000;

export { loadLiteSvm };

/**
 * The LiteSVM node (`local-node.ts`): its slots follow the wall clock, its history is bounded.
 * No WebSocket subscriptions: `wsUrl` names the RPC port (nothing here subscribes).
 */
export async function startSolanaNode(
  binding: LiteSvmBinding,
  options: SolanaNodeOptions = {},
): Promise<SolanaNode> {
  const wallets = await solanaWallets();
  const mintAuthority = await solanaKeypair("mint-authority");
  const node = await startLocalNode(binding, {
    slotTimeMs: options.slotTimeMs ?? DEFAULT_SLOT_TIME_MS,
    historySeconds: options.historySeconds ?? DEFAULT_HISTORY_SECONDS,
    historyMaxTransactions: options.historyMaxTransactions ?? DEFAULT_HISTORY_MAX_TRANSACTIONS,
    mint: {
      address: SOLANA_USDC_MINT,
      data: Uint8Array.from(mintAccountData(mintAuthority.address)),
      lamports: BigInt(MINT_RENT_LAMPORTS),
    },
  });
  const fund = async (owner: string, usdcAtomic: bigint) => {
    node.setLamports(owner, BigInt(100 * SOL));
    await node.setTokenBalance(owner, usdcAtomic);
  };
  try {
    for (const wallet of wallets) await fund(wallet.address, wallet.usdcAtomic);
  } catch (error) {
    await node.stop();
    throw error;
  }
  return {
    rpcUrl: node.rpcUrl,
    wsUrl: node.rpcUrl.replace(/^http/, "ws"),
    wallets,
    fund,
    stop: () => node.stop(),
  };
}

/**
 * The slot time tests run (12.5 slots a second, five times Solana's pace): a blockhash lives 150
 * slots, about 12 s, so a signed payment that never landed is provably unable to land soon after.
 */
export const DEFAULT_SLOT_TIME_MS = 80;

/**
 * Solana's own pace, which the service's own devnet and `npm run devnet` run: a blockhash lives
 * about 60 s, as there, so a wallet has the whole approval window it is shown (50 s) to sign a
 * payment (at the tests' pace the transaction died after 12 s while the page still offered it).
 */
export const SOLANA_SLOT_TIME_MS = 400;

/** A running Solana node with the USDC mint planted and the wallets funded. */
export interface SolanaNode {
  rpcUrl: string;
  wsUrl: string;
  wallets: SolanaWallet[];
  /** Gives `owner` the wallets' 100 SOL and a USDC token account holding `usdcAtomic` (the faucet). */
  fund(owner: string, usdcAtomic: bigint): void | Promise<void>;
  stop(): Promise<void>;
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
