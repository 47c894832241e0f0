/**
 * `npm run soak -- --minutes 10 [--seconds N] [--rate 10] [--chains solana,evm] [--sample 15]`:
 * the service as `npm start` runs it (embedded devnet, offline model) driven by paid chat turns
 * at a steady rate for a bounded time, printing every `--sample` seconds the payment time
 * (p50/p95 per chain, from the ledger: reservation to settled) and the process's memory (RSS,
 * which holds the embedded Surfpool node and Hardhat's EDR, and the V8 heap). A verdict line
 * compares the last third of the run with the first third after warm-up. Loopback only; it stops
 * by itself and stops everything it started. Not a unit test (test/soak.test.ts runs its core
 * for a few seconds). Exit code 1 when a turn failed or the ledger disagrees with the chain; the
 * verdict itself only prints.
 */
import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bootstrap } from "../src/bootstrap.js";
import { loadConfig } from "../src/config/index.js";
import type { Devnet } from "../src/devnet/index.js";
import { evmUsdcBalance, solanaUsdcBalance, walletAddress } from "../src/devnet/testing/index.js";
import { silentLogger } from "../src/log/index.js";
import { LEDGER_STATUSES } from "../src/payments/rules/index.js";
import { closeServer, listen } from "../src/service.js";

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
  /** Where each sample line goes as it is taken (default: nowhere). */
  log?: (line: string) => void;
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
  rssMb: number;
  heapMb: number;
  /**
   * RSS outside V8: RSS minus the V8 heap and `external` (ArrayBuffers such as PGlite's WASM
   * memory). Holds the native code: the Surfpool node, Hardhat's EDR, Node itself.
   */
  nativeMb: number;
}

export interface SoakResult {
  /** The chains paid on (Solana is left out where Surfpool is unavailable). */
  chains: SoakChain[];
  samples: SoakSample[];
  turns: number;
  failures: string[];
  skipped: number;
  /** Settled ledger rows per chain. */
  settled: Partial<Record<SoakChain, number>>;
  /** Ledger vs chain, one line per disagreement; empty when they agree. */
  mismatches: string[];
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

/** Latency is flat when the last third's p50 is at most this many times the first third's. */
const FLAT_LATENCY_RATIO = 1.5;
/** Memory is flat when it grew by at most this much from the first third to the last. */
const FLAT_MEMORY_MB = 50;
const CITIES = ["Paris", "Berlin", "Tokyo", "Lima", "Oslo", "Cairo", "Sydney", "Toronto", "Madrid", "Seoul"];

const mb = (bytes: number) => bytes / 1024 / 1024;
export const percentile = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))] ?? Number.NaN;
};
const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : Number.NaN);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Resident memory of this process (VmRSS; `process.memoryUsage().rss` elsewhere). */
function rssBytes(): number {
  try {
    const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync("/proc/self/status", "utf8"));
    if (match?.[1]) return Number(match[1]) * 1024;
  } catch {
    // Not Linux: Node's own figure.
  }
  return process.memoryUsage().rss;
}

export async function runSoak(options: SoakOptions): Promise<SoakResult> {
  // The ledger on disk, as `npm start` keeps it (PGlite in memory would grow with every row).
  const dataDir = await mkdtemp(join(tmpdir(), "soak-"));
  try {
    return await soakIn(dataDir, options);
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
}

async function soakIn(dataDir: string, options: SoakOptions): Promise<SoakResult> {
  const log = options.log ?? (() => {});
  const env: Record<string, string> = {
    PAYMENTS: "devnet",
    MODEL_PROVIDER: "offline",
    DATA_DIR: join(dataDir, "data"),
    PORT: "0",
    HOST: "127.0.0.1",
    RATE_LIMIT_POINTS: "1000000",
    LIMIT_DAILY: "1000",
  };
  const running = await bootstrap(loadConfig(env), silentLogger, { devnetManifest: null });
  const devnet = running.devnet;
  const payments = running.payments;
  if (!devnet || !payments) throw new Error("the service started without its devnet");
  const chains = options.chains.filter((c) => c === "evm" || devnet.manifest.solana);
  if (chains.length === 0) throw new Error("no chain to pay on (Surfpool unavailable?)");
  const { server, url } = await listen(running.service.app, { host: "127.0.0.1", port: 0 });
  const payers = Object.fromEntries(chains.map((c) => [c, payerOf(devnet, c)])) as Record<SoakChain, string>;
  const before = await balances(devnet, chains, payers);

  const samples: SoakSample[] = [];
  const failures: string[] = [];
  let turns = 0;
  let skipped = 0;
  let inFlight = 0;
  // Per interval, filled as turns end; swapped out at each sample.
  let window = { turnTimes: [] as number[], failed: 0, skipped: 0 };
  const running_: Promise<void>[] = [];
  const t0 = Date.now();

  const turn = async (i: number) => {
    const chain = chains[i % chains.length] as SoakChain;
    inFlight++;
    const start = performance.now();
    try {
      const detail = await chatTurn(
        url,
        devnet.manifest.devToken,
        payers[chain],
        CITIES[i % CITIES.length] ?? "Paris",
      );
      if (detail) {
        window.failed++;
        if (failures.length < 20) failures.push(`turn ${i} (${chain}): ${detail}`);
        else failures.push("");
      } else window.turnTimes.push(performance.now() - start);
    } finally {
      inFlight--;
      turns++;
    }
  };

  // Memory is sampled on its own timer; payment times are bucketed afterwards from the ledger
  // (reading every row during the run would itself load the process).
  const memory: Array<{
    atMs: number;
    rss: number;
    heap: number;
    native: number;
    turnTimes: number[];
    failed: number;
    skipped: number;
  }> = [];
  const takeSample = () => {
    const w = window;
    window = { turnTimes: [], failed: 0, skipped: 0 };
    const usage = process.memoryUsage();
    const rss = rssBytes();
    memory.push({
      atMs: Date.now() - t0,
      rss,
      heap: usage.heapUsed,
      native: rss - usage.heapTotal - usage.external,
      ...w,
    });
    const m = memory.at(-1);
    if (m)
      log(
        `  t=${Math.round(m.atMs / 1000)}s turns=${m.turnTimes.length} turn p50=${percentile(m.turnTimes, 50).toFixed(0)}ms failed=${m.failed} rss=${mb(m.rss).toFixed(0)}MB heap=${mb(m.heap).toFixed(0)}MB native=${mb(m.native).toFixed(0)}MB`,
      );
  };
  const sampler = setInterval(takeSample, options.sampleMs);

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
      running_.push(turn(i));
      if (running_.length > 1000) running_.splice(0, running_.length - 100);
    }
    await Promise.allSettled(running_);
  } finally {
    clearInterval(sampler);
    // The last, partial interval: turns that ended after the last tick.
    takeSample();
    await closeServer(server);
  }

  const rows = await payments.ledger.listByStatus(LEDGER_STATUSES);
  const after = await balances(devnet, chains, payers);
  await running.service.shutdown();

  const chainOf = (network: string): SoakChain | undefined =>
    network === devnet.manifest.evm.network
      ? "evm"
      : network === devnet.manifest.solana?.network
        ? "solana"
        : undefined;
  const mismatches: string[] = [];
  const settled: Partial<Record<SoakChain, number>> = {};
  const settledSum: Partial<Record<SoakChain, bigint>> = {};
  const payTimes: Array<{ chain: SoakChain; atMs: number; ms: number }> = [];
  const other: Record<string, number> = {};
  for (const row of rows) {
    const chain = chainOf(row.network);
    if (!chain) {
      mismatches.push(`row ${row.paymentId} on an unknown network ${row.network}`);
      continue;
    }
    if (row.status !== "settled" || !row.settledAt) {
      other[row.status] = (other[row.status] ?? 0) + 1;
      continue;
    }
    settled[chain] = (settled[chain] ?? 0) + 1;
    settledSum[chain] = (settledSum[chain] ?? 0n) + row.amount;
    payTimes.push({
      chain,
      atMs: row.settledAt.getTime() - t0,
      ms: row.settledAt.getTime() - row.createdAt.getTime(),
    });
  }
  for (const [status, n] of Object.entries(other)) mismatches.push(`${n} ledger rows left ${status}`);
  for (const chain of chains) {
    const paid = (before[chain]?.payer ?? 0n) - (after[chain]?.payer ?? 0n);
    const received = (after[chain]?.merchant ?? 0n) - (before[chain]?.merchant ?? 0n);
    const ledger = settledSum[chain] ?? 0n;
    if (paid !== ledger) mismatches.push(`${chain} payer: ledger settled ${ledger}, chain decrease ${paid}`);
    if (received !== ledger)
      mismatches.push(`${chain} merchant: ledger settled ${ledger}, chain increase ${received}`);
  }

  let from = 0;
  for (const m of memory) {
    const pay: SoakSample["pay"] = {};
    for (const chain of chains) {
      const xs = payTimes
        .filter((p) => p.chain === chain && p.atMs > from && p.atMs <= m.atMs)
        .map((p) => p.ms);
      pay[chain] = { n: xs.length, p50: percentile(xs, 50), p95: percentile(xs, 95) };
    }
    samples.push({
      atS: Math.round(m.atMs / 1000),
      pay,
      turns: m.turnTimes.length,
      turnP50: percentile(m.turnTimes, 50),
      failed: m.failed,
      skipped: m.skipped,
      rssMb: mb(m.rss),
      heapMb: mb(m.heap),
      nativeMb: mb(m.native),
    });
    from = m.atMs;
  }
  return {
    chains,
    samples,
    turns,
    failures: failures.filter(Boolean),
    skipped,
    settled,
    mismatches,
    verdict: verdict(samples, chains, options.warmupMs),
  };
}

/** Flat or growing: the last third of the samples after warm-up against the first third. */
export function verdict(samples: SoakSample[], chains: SoakChain[], warmupMs: number): SoakVerdict {
  const measured = samples.filter((s) => s.atS * 1000 > warmupMs);
  const third = Math.floor(measured.length / 3);
  if (third < 1) {
    return {
      latencyRatio: {},
      rssDeltaMb: Number.NaN,
      flat: false,
      line: "verdict: too short to tell (fewer than 3 samples after warm-up)",
    };
  }
  const first = measured.slice(0, third);
  const last = measured.slice(-third);
  const latencyRatio: SoakVerdict["latencyRatio"] = {};
  for (const chain of chains) {
    const p50 = (xs: SoakSample[]) =>
      mean(xs.map((s) => s.pay[chain]?.p50 ?? Number.NaN).filter((x) => !Number.isNaN(x)));
    latencyRatio[chain] = p50(last) / p50(first);
  }
  const rssDeltaMb = mean(last.map((s) => s.rssMb)) - mean(first.map((s) => s.rssMb));
  const latencyFlat = Object.values(latencyRatio).every((r) => r <= FLAT_LATENCY_RATIO);
  const memoryFlat = rssDeltaMb <= FLAT_MEMORY_MB;
  const flat = latencyFlat && memoryFlat;
  const ratios = chains
    .map((c) => `${c} payment p50 x${(latencyRatio[c] ?? Number.NaN).toFixed(2)}`)
    .join(", ");
  const line =
    `verdict: ${flat ? "FLAT" : "GROWING"} (last third vs first third after ${warmupMs / 1000} s warm-up: ` +
    `${ratios} [flat <= x${FLAT_LATENCY_RATIO}]; RSS ${rssDeltaMb >= 0 ? "+" : ""}${rssDeltaMb.toFixed(0)} MB [flat <= +${FLAT_MEMORY_MB} MB])`;
  return { latencyRatio, rssDeltaMb, flat, line };
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

/** The table both curves print as. */
export function table(result: SoakResult, chains: SoakChain[]): string[] {
  const f = (n: number | undefined) => (n === undefined || Number.isNaN(n) ? "-" : n.toFixed(0));
  const head = [
    "t s",
    ...chains.flatMap((c) => [`${c} paid`, `${c} p50 ms`, `${c} p95 ms`]),
    "turn p50 ms",
    "failed",
    "skipped",
    "RSS MB",
    "heap MB",
    "native MB",
  ];
  const out = [`| ${head.join(" | ")} |`, `|${head.map(() => "---").join("|")}|`];
  for (const s of result.samples) {
    const cells = [
      String(s.atS),
      ...chains.flatMap((c) => [String(s.pay[c]?.n ?? 0), f(s.pay[c]?.p50), f(s.pay[c]?.p95)]),
      f(s.turnP50),
      String(s.failed),
      String(s.skipped),
      f(s.rssMb),
      f(s.heapMb),
      f(s.nativeMb),
    ];
    out.push(`| ${cells.join(" | ")} |`);
  }
  return out;
}

function parseArgs(argv: string[]): SoakOptions {
  const value = (name: string): string | undefined => {
    const i = argv.findIndex((a) => a === `--${name}` || a.startsWith(`--${name}=`));
    if (i < 0) return undefined;
    const arg = argv[i] as string;
    return arg.includes("=") ? arg.slice(arg.indexOf("=") + 1) : argv[i + 1];
  };
  const number = (name: string, fallback: number, max: number): number => {
    const raw = value(name);
    if (raw === undefined) return fallback;
    const n = Number(raw);
    if (!Number.isFinite(n) || n <= 0 || n > max)
      throw new Error(`--${name} must be a number in (0, ${max}]`);
    return n;
  };
  const seconds =
    value("seconds") !== undefined ? number("seconds", 60, 86_400) : number("minutes", 10, 1_440) * 60;
  const chains = (value("chains") ?? "solana,evm").split(",").map((c) => c.trim());
  for (const c of chains) if (c !== "evm" && c !== "solana") throw new Error(`--chains: unknown chain ${c}`);
  const sampleMs = number("sample", Math.min(15, Math.max(2, seconds / 10)), 3_600) * 1000;
  return {
    durationMs: seconds * 1000,
    rate: number("rate", 10, 1_000),
    chains: chains as SoakChain[],
    sampleMs,
    warmupMs: Math.min(60_000, (seconds * 1000) / 6),
    maxInFlight: 200,
    log: (line) => process.stderr.write(`${line}\n`),
  };
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].replace(/^.*\//, "/"))) {
  const options = parseArgs(process.argv.slice(2));
  process.stderr.write(
    `soak: ${options.durationMs / 1000} s at ${options.rate} paid chat turns/s on ${options.chains.join(", ")}, sampled every ${options.sampleMs / 1000} s\n`,
  );
  const result = await runSoak(options);
  const chains = result.chains;
  console.log(table(result, chains).join("\n"));
  console.log(
    `\n${result.turns} turns, ${result.failures.length} failed, ${result.skipped} skipped (over ${options.maxInFlight} in flight); settled rows: ${chains.map((c) => `${c} ${result.settled[c] ?? 0}`).join(", ")}`,
  );
  console.log(
    result.mismatches.length === 0
      ? "ledger == chain: yes"
      : `ledger == chain: NO\n  ${result.mismatches.join("\n  ")}`,
  );
  for (const f of result.failures.slice(0, 5)) console.log(`  failed: ${f}`);
  console.log(result.verdict.line);
  if (result.failures.length > 0 || result.mismatches.length > 0) process.exitCode = 1;
  // Native handles (Surfpool's threads) may linger after stop: leave now.
  process.exit();
}
