import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { writeHeapSnapshot } from "node:v8";
import { bootstrap } from "../../src/bootstrap.js";
import { loadConfig } from "../../src/config/index.js";
import type { Devnet } from "../../src/devnet/index.js";
import { evmUsdcBalance, solanaUsdcBalance, walletAddress } from "../../src/devnet/testing/index.js";
import { silentLogger } from "../../src/log/index.js";
import type { Payments } from "../../src/payments/index.js";
import { LEDGER_STATUSES } from "../../src/protocol/index.js";
import { closeServer, listen } from "../../src/service.js";
import { percentile, verdict } from "./report.js";
import { installRpcMeter, type RpcMeter } from "./rpc-meter.js";
import type { SoakChain, SoakLedger, SoakOptions, SoakResult, SoakSample } from "./types.js";

const CITIES = ["Paris", "Berlin", "Tokyo", "Lima", "Oslo", "Cairo", "Sydney", "Toronto", "Madrid", "Seoul"];
/** Rows whose outcome is not known yet: the reconciler resolves them from the chain. */
const UNCLEAR = ["unknown", "signed", "submitted"] as const;

const mb = (bytes: number) => bytes / 1024 / 1024;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Resident memory of a process (VmRSS; for this one `process.memoryUsage().rss` off Linux, else 0). */
function rssBytes(pid: number | "self" = "self"): number {
  try {
    const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    if (match?.[1]) return Number(match[1]) * 1024;
  } catch {
    // Not Linux: Node's own figure.
  }
  return pid === "self" ? process.memoryUsage().rss : 0;
}

export async function runSoak(options: SoakOptions): Promise<SoakResult> {
  // The ledger on disk, as `npm start` keeps it (PGlite in memory would grow with every row).
  const dataDir = await mkdtemp(join(tmpdir(), "soak-"));
  const meter = installRpcMeter();
  try {
    return await soakIn(dataDir, options, meter);
  } finally {
    meter.uninstall();
    await rm(dataDir, { recursive: true, force: true });
  }
}

interface Interval {
  atMs: number;
  rss: number;
  evmChainRss: number;
  heap: number;
  heapTotal: number;
  external: number;
  turnTimes: number[];
  failed: number;
  skipped: number;
  solanaRpc: SoakSample["solanaRpc"];
  probeHistoryMs: number;
  chainBehindS: number;
  loopP99Ms: number;
}

async function soakIn(dataDir: string, options: SoakOptions, meter: RpcMeter): Promise<SoakResult> {
  const env: Record<string, string> = {
    PAYMENTS: "devnet",
    MODEL_PROVIDER: "offline",
    DATA_DIR: join(dataDir, "data"),
    PORT: "0",
    HOST: "127.0.0.1",
    RATE_LIMIT_POINTS: "1000000",
    RATE_LIMIT_ANONYMOUS_POINTS: "1000000",
    LIMIT_DAILY: "1000",
  };
  // The devnet's own lines (its EVM chain's renewals) go to the soak's log; the service is silent.
  const logger = {
    ...silentLogger,
    info: (message: string, fields?: Record<string, unknown>) => {
      const line = fields?.line;
      if (message === "devnet" && typeof line === "string" && line.startsWith("devnet: EVM chain"))
        options.log?.(`  ${line}`);
    },
  };
  const running = await bootstrap(loadConfig(env), logger, { devnetManifest: null });
  const devnet = running.devnet;
  const payments = running.payments;
  const store = running.store;
  if (!devnet || !payments || !store) throw new Error("the service started without its devnet");
  const chains = options.chains.filter((c) => c === "evm" || devnet.manifest.solana);
  if (chains.length === 0) throw new Error("no chain to pay on (no Solana node on this platform?)");
  if (devnet.manifest.solana) meter.watch(devnet.manifest.solana.rpcUrl);
  const { server, url } = await listen(running.service.app, { host: "127.0.0.1", port: 0 });
  const payers = Object.fromEntries(chains.map((c) => [c, payerOf(devnet, c)])) as Record<SoakChain, string>;
  const before = await balances(devnet, chains, payers);
  const t0 = Date.now();
  const snapshots = scheduleSnapshots(options);
  let load: Awaited<ReturnType<typeof drive>>;
  try {
    load = await drive(options, chains, t0, meter, {
      pay: (chain, city) => chatTurn(url, devnet.manifest.devToken, payers[chain], city),
      probe: () => probeHistory(devnet, payers.solana),
      chainBehind: () => chainBehind(devnet),
      evmChainPid: () => devnet.evmChainPid(),
    });
  } finally {
    snapshots.cancel();
    await closeServer(server);
  }
  const reconcile = await reconcileAll(payments, options.settleMs ?? 0);
  const rows = await store.ledger.listByStatus(LEDGER_STATUSES);
  const after = await balances(devnet, chains, payers);
  await running.service.shutdown();

  const chainOf = (network: string): SoakChain | undefined =>
    network === devnet.manifest.evm.network
      ? "evm"
      : network === devnet.manifest.solana?.network
        ? "solana"
        : undefined;
  const mismatches: string[] = [];
  const ledger: SoakLedger[] = chains.map((chain) => ({
    chain,
    rows: {},
    payerDecrease: (before[chain]?.payer ?? 0n) - (after[chain]?.payer ?? 0n),
    merchantIncrease: (after[chain]?.merchant ?? 0n) - (before[chain]?.merchant ?? 0n),
  }));
  const payTimes: Array<{ chain: SoakChain; atMs: number; ms: number }> = [];
  let unclear = 0;
  for (const row of rows) {
    const chain = chainOf(row.network);
    const book = ledger.find((l) => l.chain === chain);
    if (!chain || !book) {
      mismatches.push(`row ${row.paymentId} on an unknown network ${row.network}`);
      continue;
    }
    const entry = book.rows[row.status] ?? { n: 0, amount: 0n };
    book.rows[row.status] = { n: entry.n + 1, amount: entry.amount + row.amount };
    if ((UNCLEAR as readonly string[]).includes(row.status)) unclear++;
    if (row.status === "settled" && row.settledAt) {
      payTimes.push({
        chain,
        atMs: row.settledAt.getTime() - t0,
        ms: row.settledAt.getTime() - row.createdAt.getTime(),
      });
    }
  }
  for (const book of ledger) {
    const settled = book.rows.settled?.amount ?? 0n;
    for (const status of UNCLEAR) {
      const left = book.rows[status];
      if (left)
        mismatches.push(
          `${book.chain}: ${left.n} rows still ${status} (${left.amount}) after reconciliation`,
        );
    }
    if (book.payerDecrease !== settled)
      mismatches.push(`${book.chain} payer: ledger settled ${settled}, chain decrease ${book.payerDecrease}`);
    if (book.merchantIncrease !== settled)
      mismatches.push(
        `${book.chain} merchant: ledger settled ${settled}, chain increase ${book.merchantIncrease}`,
      );
  }

  const samples = bucket(load.intervals, payTimes, chains);
  return {
    chains,
    samples,
    turns: load.turns,
    failed: load.failures.length,
    failures: load.failures.filter(Boolean),
    skipped: load.skipped,
    settled: Object.fromEntries(ledger.map((l) => [l.chain, l.rows.settled?.n ?? 0])),
    ledger,
    unclear,
    reconcile,
    mismatches,
    solanaRpcTotals: meter.totals(),
    verdict: verdict(samples, chains, options.warmupMs),
  };
}

interface DriveDeps {
  /** One paid chat turn; a failure's detail, or undefined when it ended payment-complete. */
  pay(chain: SoakChain, city: string): Promise<string | undefined>;
  probe(): Promise<number>;
  chainBehind(): Promise<number>;
  /** The EVM chain's process (the devnet runs it beside this one). */
  evmChainPid(): number;
}

/** The open-loop load: a turn every 1/rate s, alternating chains, sampled every `sampleMs`. */
async function drive(
  options: SoakOptions,
  chains: SoakChain[],
  t0: number,
  meter: RpcMeter,
  deps: DriveDeps,
) {
  const log = options.log ?? (() => {});
  const intervals: Interval[] = [];
  const failures: string[] = [];
  let turns = 0;
  let skipped = 0;
  let inFlight = 0;
  // Per interval, filled as turns end; swapped out at each sample.
  let window = { turnTimes: [] as number[], failed: 0, skipped: 0 };
  const running: Promise<void>[] = [];
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();

  const turn = async (i: number) => {
    const chain = chains[i % chains.length] as SoakChain;
    inFlight++;
    const start = performance.now();
    try {
      const detail = await deps.pay(chain, CITIES[i % CITIES.length] ?? "Paris");
      if (detail) {
        window.failed++;
        failures.push(failures.length < 20 ? `turn ${i} (${chain}): ${detail}` : "");
      } else window.turnTimes.push(performance.now() - start);
    } finally {
      inFlight--;
      turns++;
    }
  };
  // Memory and RPC are sampled on their own timer; payment times are bucketed afterwards from the
  // ledger (reading every row during the run would itself load the process).
  const takeSample = async () => {
    const w = window;
    window = { turnTimes: [], failed: 0, skipped: 0 };
    const solanaRpc = meter.take();
    // Under NODE_OPTIONS=--expose-gc a full collection comes first: heap used is then the live heap.
    (globalThis as { gc?: () => void }).gc?.();
    const usage = process.memoryUsage();
    const rss = rssBytes();
    const evmChainRss = rssBytes(deps.evmChainPid());
    const loopP99Ms = loop.percentile(99) / 1e6;
    loop.reset();
    const probeHistoryMs = await deps.probe().catch(() => Number.NaN);
    const chainBehindS = await deps.chainBehind().catch(() => Number.NaN);
    const m: Interval = {
      atMs: Date.now() - t0,
      rss,
      evmChainRss,
      heap: usage.heapUsed,
      heapTotal: usage.heapTotal,
      external: usage.external,
      solanaRpc,
      probeHistoryMs,
      chainBehindS,
      loopP99Ms,
      ...w,
    };
    intervals.push(m);
    log(
      `  t=${Math.round(m.atMs / 1000)}s turns=${m.turnTimes.length} turn p50=${percentile(m.turnTimes, 50).toFixed(0)}ms failed=${m.failed} rss=${mb(m.rss).toFixed(0)}+${mb(evmChainRss).toFixed(0)}MB heap=${mb(m.heap).toFixed(0)}/${mb(m.heapTotal).toFixed(0)}MB native=${mb(rss - usage.heapTotal - usage.external).toFixed(0)}MB history scan=${probeHistoryMs.toFixed(1)}ms loop p99=${loopP99Ms.toFixed(0)}ms`,
    );
  };
  const sampler = setInterval(() => void takeSample(), options.sampleMs);
  try {
    const gap = 1000 / options.rate;
    for (let i = 0; ; i++) {
      const due = t0 + i * gap;
      if (due >= t0 + options.durationMs) break;
      const wait = due - Date.now();
      if (wait > 0) await sleep(wait);
      if (inFlight >= options.maxInFlight) {
        skipped++;
        window.skipped++;
        continue;
      }
      running.push(turn(i));
      if (running.length > 1000) running.splice(0, running.length - 100);
    }
    await Promise.allSettled(running);
  } finally {
    clearInterval(sampler);
    loop.disable();
    // The last, partial interval: turns that ended after the last tick.
    await takeSample();
  }
  return { intervals, failures, turns, skipped };
}

/**
 * Sweeps until nothing is unclear or `settleMs` passed (at least one sweep): what the service
 * does on its own every RECONCILE_INTERVAL_MS, so the ledger is compared with the chain once the
 * unclear rows had their chance to be resolved from it.
 */
async function reconcileAll(payments: Payments, settleMs: number): Promise<{ sweeps: number; ms: number }> {
  const start = Date.now();
  let sweeps = 0;
  for (;;) {
    sweeps++;
    const { unresolved } = await payments.reconciler.sweep();
    if (unresolved === 0 || Date.now() - start >= settleMs) break;
    await sleep(Math.min(5_000, Math.max(0, settleMs - (Date.now() - start))));
  }
  return { sweeps, ms: Date.now() - start };
}

function bucket(
  intervals: Interval[],
  payTimes: Array<{ chain: SoakChain; atMs: number; ms: number }>,
  chains: SoakChain[],
): SoakSample[] {
  let from = 0;
  return intervals.map((m) => {
    const pay: SoakSample["pay"] = {};
    for (const chain of chains) {
      const xs = payTimes
        .filter((p) => p.chain === chain && p.atMs > from && p.atMs <= m.atMs)
        .map((p) => p.ms);
      pay[chain] = { n: xs.length, p50: percentile(xs, 50), p95: percentile(xs, 95) };
    }
    from = m.atMs;
    return {
      atS: Math.round(m.atMs / 1000),
      pay,
      turns: m.turnTimes.length,
      turnP50: percentile(m.turnTimes, 50),
      failed: m.failed,
      skipped: m.skipped,
      rssMb: mb(m.rss + m.evmChainRss),
      evmChainMb: mb(m.evmChainRss),
      heapMb: mb(m.heap),
      externalMb: mb(m.external),
      nativeMb: mb(m.rss - m.heapTotal - m.external),
      solanaRpc: m.solanaRpc,
      probeHistoryMs: m.probeHistoryMs,
      chainBehindS: m.chainBehindS,
      loopP99Ms: m.loopP99Ms,
    };
  });
}

/** One `getSignaturesForAddress(payer, limit 1)`, ms: what a history read costs the node now. */
async function probeHistory(devnet: Devnet, payer: string | undefined): Promise<number> {
  const solana = devnet.manifest.solana;
  if (!solana || !payer) return Number.NaN;
  const start = performance.now();
  const response = await fetch(`${solana.rpcUrl}#probe`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "getSignaturesForAddress",
      params: [payer, { limit: 1 }],
    }),
  });
  await response.json();
  return performance.now() - start;
}

/** Our clock minus the Solana node's (its latest finalized block's time), s. */
async function chainBehind(devnet: Devnet): Promise<number> {
  const solana = devnet.manifest.solana;
  if (!solana) return Number.NaN;
  const call = async (method: string, params: unknown[]) => {
    const response = await fetch(`${solana.rpcUrl}#probe`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
    });
    return ((await response.json()) as { result: number }).result;
  };
  const slot = await call("getSlot", [{ commitment: "finalized" }]);
  const time = await call("getBlockTime", [slot]);
  return Date.now() / 1000 - time;
}

function payerOf(devnet: Devnet, chain: SoakChain): string {
  return walletAddress(devnet, chain as "solana", "payer");
}

async function balances(
  devnet: Devnet,
  chains: SoakChain[],
  payers: Record<SoakChain, string>,
): Promise<Partial<Record<SoakChain, { payer: bigint; merchant: bigint }>>> {
  const out: Partial<Record<SoakChain, { payer: bigint; merchant: bigint }>> = {};
  for (const chain of chains) {
    if (chain === "evm") {
      out.evm = {
        payer: await evmUsdcBalance(devnet, payers.evm as `0x${string}`),
        merchant: await evmUsdcBalance(devnet, walletAddress(devnet, "evm", "merchant")),
      };
    } else {
      out.solana = {
        payer: await solanaUsdcBalance(devnet, payers.solana),
        merchant: await solanaUsdcBalance(devnet, walletAddress(devnet, "solana", "merchant")),
      };
    }
  }
  return out;
}

/** One paid chat turn as a user sends it; undefined when it ended payment-complete. */
async function chatTurn(
  base: string,
  token: string,
  wallet: string,
  city: string,
): Promise<string | undefined> {
  try {
    const res = await fetch(`${base}/api/chat`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
      body: JSON.stringify({
        messages: [{ role: "user", content: `What's the weather in ${city}?` }],
        walletAddress: wallet,
        spendingLimits: { perTransaction: "1", perRequest: "1", daily: "1000" },
      }),
      signal: AbortSignal.timeout(60_000),
    });
    const text = await res.text();
    const finish = text
      .split("\n")
      .filter((l) => l.startsWith("d:"))
      .at(-1);
    if (res.status === 200 && finish?.includes('"finishReason":"payment-complete"')) return undefined;
    return `HTTP ${res.status} ${(finish ?? text).slice(0, 300)}`;
  } catch (error) {
    return `fetch failed: ${error instanceof Error ? error.message : String(error)}`;
  }
}

/**
 * Heap snapshots while the load runs (`--heap-snapshots`): each blocks the process for some
 * seconds and briefly needs as much memory again as the heap, so the minute it falls in reads
 * slower and larger; the verdict compares thirds, not minutes.
 */
function scheduleSnapshots(options: SoakOptions): { cancel: () => void } {
  const plan = options.heapSnapshots;
  if (!plan) return { cancel: () => {} };
  const timers = plan.atMs.map((at) =>
    setTimeout(
      () => {
        const minute = (at / 60_000).toFixed(1).replace(/\.0$/, "");
        const file = writeHeapSnapshot(join(plan.dir, `soak-minute-${minute}.heapsnapshot`));
        options.log?.(`  heap snapshot at minute ${minute}: ${file}`);
      },
      Math.min(at, options.durationMs - 5_000),
    ),
  );
  return { cancel: () => timers.forEach(clearTimeout) };
}
