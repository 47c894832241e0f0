/**
 * `npm run soak -- --minutes 10 [--seconds N] [--rate 10] [--chains solana,evm] [--sample 60]
 * [--settle 240]`: the service as `npm start` runs it (embedded devnet, offline model) driven by
 * paid chat turns at a steady rate for a bounded time. It prints, one row per `--sample` interval
 * (a minute on runs of 5 minutes or more): the payment time per chain (p50/p95, from the ledger:
 * reservation to settled) and the process's memory (RSS, V8 heap, `external` = PGlite's WASM
 * memory, native = Hardhat's EDR, LiteSVM and Node); then every Solana RPC call
 * the process made per interval, by method, with a probe of the node's history scan. After the
 * load the reconciler sweeps for up to `--settle` seconds, then the ledger (every status, unclear
 * rows counted) is compared with the chain. A verdict line compares the last third of the run with
 * the first third after warm-up. `--heap-snapshots 10,30,60 [--heap-dir DIR]` writes V8 heap snapshots
 * at those minutes (scripts/soak/heap-diff.ts compares two). Loopback only; it stops by itself and stops everything it
 * started. Not a unit test (test/soak.test.ts runs its core for a few seconds). Exit code 1 when a
 * turn failed or the ledger disagrees with the chain; the verdict itself only prints.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ledgerLines, rpcTable, table } from "./soak/report.js";
import { runSoak } from "./soak/run.js";
import type { SoakOptions } from "./soak/types.js";

export { percentile, verdict } from "./soak/report.js";
export { runSoak } from "./soak/run.js";
export type { SoakChain, SoakOptions, SoakResult, SoakSample } from "./soak/types.js";

function parseArgs(argv: string[]): SoakOptions {
  const value = (name: string): string | undefined => {
    const i = argv.findIndex((a) => a === `--${name}` || a.startsWith(`--${name}=`));
    if (i < 0) return undefined;
    const arg = argv[i] as string;
    return arg.includes("=") ? arg.slice(arg.indexOf("=") + 1) : argv[i + 1];
  };
  const number = (name: string, fallback: number, max: number, min = 0): number => {
    const raw = value(name);
    if (raw === undefined) return fallback;
    const n = Number(raw);
    if (!Number.isFinite(n) || n <= min || n > max)
      throw new Error(`--${name} must be a number in (${min}, ${max}]`);
    return n;
  };
  const seconds =
    value("seconds") !== undefined ? number("seconds", 60, 86_400) : number("minutes", 10, 1_440) * 60;
  const chains = (value("chains") ?? "solana,evm").split(",").map((c) => c.trim());
  for (const c of chains) if (c !== "evm" && c !== "solana") throw new Error(`--chains: unknown chain ${c}`);
  const defaultSample = seconds >= 300 ? 60 : Math.min(15, Math.max(2, seconds / 10));
  return {
    durationMs: seconds * 1000,
    rate: number("rate", 10, 1_000),
    chains: chains as SoakOptions["chains"],
    sampleMs: number("sample", defaultSample, 3_600) * 1000,
    warmupMs: Math.min(60_000, (seconds * 1000) / 6),
    maxInFlight: 200,
    ...heapSnapshots(value("heap-snapshots"), value("heap-dir")),
    settleMs: number("settle", 240, 3_600, -1) * 1000,
    log: (line) => process.stderr.write(`${line}\n`),
  };
}

/** `--heap-snapshots 10,30,60` (minutes after the load starts) into `--heap-dir` (default: a new temp dir). */
function heapSnapshots(
  minutes: string | undefined,
  dir: string | undefined,
): Pick<SoakOptions, "heapSnapshots"> {
  if (minutes === undefined) return {};
  const atMs = minutes.split(",").map((m) => Number(m) * 60_000);
  if (atMs.some((n) => !Number.isFinite(n) || n <= 0))
    throw new Error("--heap-snapshots: minutes after the start, comma separated (e.g. 10,30,60)");
  return { heapSnapshots: { atMs, dir: dir ?? mkdtempSync(join(tmpdir(), "soak-heap-")) } };
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].replace(/^.*\//, "/"))) {
  const options = parseArgs(process.argv.slice(2));
  process.stderr.write(
    `soak: ${options.durationMs / 1000} s at ${options.rate} paid chat turns/s on ${options.chains.join(", ")}, sampled every ${options.sampleMs / 1000} s\n`,
  );
  const result = await runSoak(options);
  const chains = result.chains;
  console.log("Payment time and memory per interval:\n");
  console.log(table(result, chains).join("\n"));
  if (chains.includes("solana")) {
    console.log(
      "\nSolana RPC calls per interval (all callers in the process), and the history-scan probe:\n",
    );
    console.log(rpcTable(result).join("\n"));
    const settled = result.settled.solana ?? 0;
    const perPayment = Object.entries(result.solanaRpcTotals)
      .sort((a, b) => b[1] - a[1])
      .map(([m, n]) => `${m} ${(settled ? n / settled : Number.NaN).toFixed(2)}`)
      .join(", ");
    console.log(`\nSolana RPC calls per settled Solana payment (whole run): ${perPayment}`);
  }
  console.log(
    `\n${result.turns} turns, ${result.failed} failed, ${result.skipped} skipped (over ${options.maxInFlight} in flight); settled rows: ${chains.map((c) => `${c} ${result.settled[c] ?? 0}`).join(", ")}`,
  );
  console.log(
    `reconciliation after the load: ${result.reconcile.sweeps} sweep(s) in ${(result.reconcile.ms / 1000).toFixed(1)} s; ${result.unclear} row(s) still unclear`,
  );
  console.log(ledgerLines(result).join("\n"));
  console.log(
    result.mismatches.length === 0
      ? "ledger == chain: yes (no row unclear; settled rows equal the chain's movements)"
      : `ledger == chain: NO\n  ${result.mismatches.join("\n  ")}`,
  );
  for (const f of result.failures.slice(0, 5)) console.log(`  failed: ${f}`);
  console.log(result.verdict.line);
  if (result.failed > 0 || result.mismatches.length > 0) process.exitCode = 1;
  // Native handles (the chains' threads) may linger after stop: leave now.
  process.exit();
}
