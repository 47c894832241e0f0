import type { SoakChain, SoakResult, SoakSample, SoakVerdict } from "./types.js";

/** Latency is flat when the last third's p50 is at most this many times the first third's. */
const FLAT_LATENCY_RATIO = 1.5;
/** Memory is flat when it grew by at most this much from the first third to the last. */
const FLAT_MEMORY_MB = 50;

export const percentile = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))] ?? Number.NaN;
};
const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : Number.NaN);
const f = (n: number | undefined) => (n === undefined || Number.isNaN(n) ? "-" : n.toFixed(0));

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

/** Both curves: payment time per chain and the process's memory, one row per interval. */
export function table(result: SoakResult, chains: SoakChain[]): string[] {
  const head = [
    "t s",
    ...chains.flatMap((c) => [`${c} paid`, `${c} p50 ms`, `${c} p95 ms`]),
    "turn p50 ms",
    "loop p99 ms",
    "failed",
    "skipped",
    "RSS MB",
    "EVM chain MB",
    "heap MB",
    "external MB",
    "native MB",
  ];
  const out = [`| ${head.join(" | ")} |`, `|${head.map(() => "---").join("|")}|`];
  for (const s of result.samples) {
    const cells = [
      String(s.atS),
      ...chains.flatMap((c) => [String(s.pay[c]?.n ?? 0), f(s.pay[c]?.p50), f(s.pay[c]?.p95)]),
      f(s.turnP50),
      f(s.loopP99Ms),
      String(s.failed),
      String(s.skipped),
      f(s.rssMb),
      f(s.evmChainMb),
      f(s.heapMb),
      f(s.externalMb),
      f(s.nativeMb),
    ];
    out.push(`| ${cells.join(" | ")} |`);
  }
  return out;
}

/** The Solana RPC calls per interval: for each method, calls and p50 ms; and the history probe. */
export function rpcTable(result: SoakResult): string[] {
  const methods = Object.entries(result.solanaRpcTotals)
    .sort((a, b) => b[1] - a[1])
    .map(([m]) => m);
  const head = [
    "t s",
    ...methods.map((m) => `${m} n / p50 ms`),
    "probe history scan ms",
    "chain clock behind s",
  ];
  const out = [`| ${head.join(" | ")} |`, `|${head.map(() => "---").join("|")}|`];
  for (const s of result.samples) {
    const cells = methods.map((m) => {
      const stat = s.solanaRpc[m];
      return stat ? `${stat.calls} / ${stat.p50.toFixed(1)}` : "0";
    });
    out.push(
      `| ${[String(s.atS), ...cells, s.probeHistoryMs.toFixed(1), s.chainBehindS.toFixed(0)].join(" | ")} |`,
    );
  }
  return out;
}

/** Per chain: the ledger by status against the chain's balances; unclear rows are counted. */
export function ledgerLines(result: SoakResult): string[] {
  const out: string[] = [];
  for (const l of result.ledger) {
    const statuses = Object.entries(l.rows)
      .map(([status, { n, amount }]) => `${status} ${n} (${amount})`)
      .join(", ");
    const settled = l.rows.settled?.amount ?? 0n;
    out.push(
      `  ${l.chain}: ledger ${statuses || "no rows"}; chain: payer -${l.payerDecrease}, merchant +${l.merchantIncrease}; settled == chain: ${settled === l.payerDecrease && settled === l.merchantIncrease ? "yes" : "NO"}`,
    );
  }
  return out;
}
