import type { MethodStats } from "./rpc-meter.js";

export type SoakChain = "evm" | "solana";

export interface SoakOptions {
  durationMs: number;
  /** Paid chat turns started per second, spread evenly and alternating between the chains. */
  rate: number;
  chains: SoakChain[];
  sampleMs: number;
  /** Samples before this are warm-up: left out of the verdict. */
  warmupMs: number;
  /** Most turns in flight; a turn due while this many run is counted as skipped. */
  maxInFlight: number;
  /**
   * After the load: how long the reconciler may take to resolve rows left unclear before the
   * ledger is compared with the chain (an unlanded Solana payment is provably failed only once its
   * blockhash expired, about 3 minutes). Default 0: one sweep, whatever is left is counted.
   */
  settleMs?: number;
  /** Where each sample line goes as it is taken (default: nowhere). */
  log?: (line: string) => void;
  /**
   * V8 heap snapshots of the soak's process (service and devnet) at these ms after the load
   * starts, written to `dir` (scripts/soak/heap-diff.ts compares two). None by default.
   */
  heapSnapshots?: { atMs: number[]; dir: string };
}

export interface SoakSample {
  /** Seconds since the load started, at the end of the interval. */
  atS: number;
  /** Per chain: payments settled in the interval and their time (ms, reservation to settled). */
  pay: Partial<Record<SoakChain, { n: number; p50: number; p95: number }>>;
  /** Chat turns ended in the interval (any chain) and their p50 in ms. */
  turns: number;
  turnP50: number;
  failed: number;
  skipped: number;
  /** The devnet's resident memory: this process's and its EVM chain process's. */
  rssMb: number;
  /** The EVM chain process's alone (EDR; renewed every 1,000 transactions). */
  evmChainMb: number;
  heapMb: number;
  /** `external`: ArrayBuffers, chiefly PGlite's WASM memory (the ledger). */
  externalMb: number;
  /**
   * This process's RSS outside V8: its RSS minus the V8 heap and `external`. Holds the native
   * code: LiteSVM, Node itself (EDR runs in the EVM chain's process).
   */
  nativeMb: number;
  /** This process's event-loop delay over the interval, p99 ms: the wait of every callback (drains, RPC answers). */
  loopP99Ms: number;
  /** The Solana RPC calls made in the interval (service, facilitator, client, reconciler), by method. */
  solanaRpc: Record<string, MethodStats>;
  /** One `getSignaturesForAddress(payer, limit 1)` at the end of the interval, ms (history scan cost). */
  probeHistoryMs: number;
  /** How far the Solana node's clock (its latest finalized block's time) is behind ours, s. */
  chainBehindS: number;
}

/** Ledger rows per chain and status with their amounts, and the chain's view. */
export interface SoakLedger {
  chain: SoakChain;
  rows: Record<string, { n: number; amount: bigint }>;
  /** The payer's decrease and the merchant's increase over the run (atomic units). */
  payerDecrease: bigint;
  merchantIncrease: bigint;
}

export interface SoakResult {
  /** The chains paid on (Solana is left out where its node is unavailable). */
  chains: SoakChain[];
  samples: SoakSample[];
  turns: number;
  /** Turns that did not end payment-complete. */
  failed: number;
  /** The first 20 of them, with what they answered. */
  failures: string[];
  skipped: number;
  /** Settled ledger rows per chain. */
  settled: Partial<Record<SoakChain, number>>;
  /** Per chain: the ledger (every status) against the chain, after reconciliation. */
  ledger: SoakLedger[];
  /** Rows left unclear (`unknown`, `signed`, `submitted`) after reconciliation, all chains. */
  unclear: number;
  /** Reconciliation after the load: sweeps run and how long they took, ms. */
  reconcile: { sweeps: number; ms: number };
  /** Ledger vs chain, one line per disagreement; empty when they agree. */
  mismatches: string[];
  /** Solana RPC calls per method over the whole run, and per settled Solana payment. */
  solanaRpcTotals: Record<string, number>;
  verdict: SoakVerdict;
}

export interface SoakVerdict {
  /** Per chain: mean payment p50 over the last third divided by the first third (after warm-up). */
  latencyRatio: Partial<Record<SoakChain, number>>;
  /** Mean RSS of the last third minus the first third, MB. */
  rssDeltaMb: number;
  flat: boolean;
  line: string;
}
