import { createRequire } from "node:module";
import { getAddressEncoder } from "@solana/kit";
import { type SolanaWallet, solanaKeypair, solanaWallets } from "./keys.js";
import { type LiteSvmBinding, loadLiteSvm } from "./litesvm.js";
import { startLocalNode } from "./local-node.js";

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
  /** Returns and forgets the events queued so far (one per slot at least). */
  drainEvents(): unknown[];
  stop(): void;
}

/** `Surfnet.startWithConfig`'s options that the devnet sets (the native class has more). */
interface SurfnetConfig {
  offline?: boolean;
  /** `clock` produces a block every `slotTimeMs`; `transaction` only when one comes. */
  blockProductionMode?: "clock" | "transaction";
  slotTimeMs?: number;
}

interface SurfnetClass {
  start(): NativeSurfnet;
  startWithConfig?(config: SurfnetConfig): NativeSurfnet;
}

/** Options of {@link startSolanaNode}; the defaults are what `npm start` runs. */
export interface SolanaNodeOptions {
  /**
   * Slot time in ms (clock block production). Default {@link DEFAULT_SLOT_TIME_MS}. Tests use a
   * short one to reach many slots quickly.
   */
  slotTimeMs?: number;
  /**
   * How often the node's event queue is drained. Default {@link DEFAULT_DRAIN_INTERVAL_MS}, or
   * every 200 slots if that is sooner.
   */
  drainIntervalMs?: number;
  /**
   * History the LiteSVM node keeps (docs/devnet.md, "How long it lasts"): every transaction of
   * the last {@link DEFAULT_HISTORY_SECONDS}, at most {@link DEFAULT_HISTORY_MAX_TRANSACTIONS}.
   */
  historySeconds?: number;
  historyMaxTransactions?: number;
  /** The node to run; default `$DEVNET_SOLANA_NODE`, else LiteSVM. */
  engine?: "litesvm" | "surfpool";
}

/**
 * How long the LiteSVM node keeps a landed transaction: far longer than the service takes to
 * resolve an unclear payment (its reconciler sweeps every 30 s; a payment that never landed is
 * provably failed about 3 minutes after signing), so a landed payment is never dropped before it
 * is found while the service runs.
 */
export const DEFAULT_HISTORY_SECONDS = 3_600;
/** ... and at most this many (about 1.5 KB each): a bound on memory whatever the rate. */
export const DEFAULT_HISTORY_MAX_TRANSACTIONS = 20_000;

/** Which Solana node the devnet runs: LiteSVM (default) or Surfpool (`DEVNET_SOLANA_NODE=surfpool`). */
export type SolanaEngine =
  | { name: "litesvm"; binding: LiteSvmBinding }
  | { name: "surfpool"; Surfnet: SurfnetClass };

/** Loads the Solana node for this platform, or the reason there is none. */
export function loadSolanaEngine(wanted = process.env.DEVNET_SOLANA_NODE): SolanaEngine | { reason: string } {
  if (wanted === "surfpool") {
    const loaded = loadSurfpool();
    return "reason" in loaded ? loaded : { name: "surfpool", Surfnet: loaded.Surfnet };
  }
  if (wanted !== undefined && wanted !== "" && wanted !== "litesvm") {
    return { reason: `DEVNET_SOLANA_NODE=${wanted}: expected litesvm or surfpool` };
  }
  const loaded = loadLiteSvm();
  return "reason" in loaded ? loaded : { name: "litesvm", binding: loaded.binding };
}

/** Starts the engine's node with the mint planted and every wallet funded. */
export function startSolanaEngine(
  engine: SolanaEngine,
  options: SolanaNodeOptions = {},
): Promise<SolanaNode> {
  return engine.name === "litesvm"
    ? startLiteSvmNode(engine.binding, options)
    : startSolanaNode(engine.Surfnet, options);
}

/**
 * The LiteSVM node (`local-node.ts`): its slots follow the wall clock, its history is bounded.
 * No WebSocket subscriptions: `wsUrl` names the RPC port (nothing here subscribes).
 */
export async function startLiteSvmNode(
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
 * The devnet's slot time: the pace Surfpool's own default runs at here (about 12 slots a second),
 * set explicitly because with its default settings Surfpool 1.5 stamps every block with its start
 * time: the chain's clock never moves, so an unclear payment that never landed could never be
 * proven unable to land (docs/devnet.md, "How long it lasts"). In clock mode with a slot time, a
 * block's time follows the wall clock.
 */
export const DEFAULT_SLOT_TIME_MS = 80;

/**
 * Surfpool queues an event per slot and, once about 1,000 wait undrained, stops producing blocks
 * and answering RPC (all but `getHealth`): about 80 s at its default pace. Draining this often
 * keeps the queue far below that.
 */
export const DEFAULT_DRAIN_INTERVAL_MS = 2_000;

/** A running Surfpool node with the USDC mint planted and the wallets funded. */
export interface SolanaNode {
  rpcUrl: string;
  wsUrl: string;
  wallets: SolanaWallet[];
  /** Gives `owner` the wallets' 100 SOL and a USDC token account holding `usdcAtomic` (the faucet). */
  fund(owner: string, usdcAtomic: bigint): void | Promise<void>;
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
export async function startSolanaNode(
  Surfnet: SurfnetClass,
  options: SolanaNodeOptions = {},
): Promise<SolanaNode> {
  const wallets = await solanaWallets();
  const mintAuthority = await solanaKeypair("mint-authority");
  const slotTimeMs = options.slotTimeMs ?? DEFAULT_SLOT_TIME_MS;
  const surfnet = launch(Surfnet, slotTimeMs);
  const drainEvery = options.drainIntervalMs ?? Math.min(DEFAULT_DRAIN_INTERVAL_MS, 200 * slotTimeMs);
  const drainer = startDrainer(surfnet, drainEvery);
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
    clearInterval(drainer);
    surfnet.stop();
    throw error;
  }
  let stopped = false;
  return {
    rpcUrl: surfnet.rpcUrl,
    wsUrl: surfnet.wsUrl,
    wallets,
    fund(owner, usdcAtomic) {
      surfnet.fundSolMany([{ address: owner, lamports: 100 * SOL }]);
      surfnet.setTokenBalance(owner, SOLANA_USDC_MINT, Number(usdcAtomic), TOKEN_PROGRAM);
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      clearInterval(drainer);
      surfnet.stop();
    },
  };
}

function launch(Surfnet: SurfnetClass, slotTimeMs: number): NativeSurfnet {
  if (!Number.isInteger(slotTimeMs) || slotTimeMs < 1) throw new Error(`bad Solana slot time ${slotTimeMs}`);
  if (!Surfnet.startWithConfig) throw new Error("this Surfpool has no startWithConfig (slot time)");
  // Without "clock", Surfpool 1.5 does not honour slotTimeMs.
  return Surfnet.startWithConfig({ offline: true, blockProductionMode: "clock", slotTimeMs });
}

/**
 * Drains the node's event queue every `intervalMs` for as long as it runs. The timer is unref'd
 * (it never keeps the process alive) and a failing drain is ignored: the next tick tries again.
 */
function startDrainer(surfnet: NativeSurfnet, intervalMs: number): NodeJS.Timeout {
  const timer = setInterval(() => {
    try {
      surfnet.drainEvents();
    } catch {
      // Nothing to do: the queue is drained again on the next tick.
    }
  }, intervalMs);
  timer.unref();
  return timer;
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
