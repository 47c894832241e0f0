import { randomBytes } from "node:crypto";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { startCluster } from "../scripts/cluster.js";
import { evmUsdcBalance, walletAddress } from "../src/devnet/testing/index.js";
import { openStore, type Store } from "../src/store/index.js";
import { chatTurn, type LoadJob, type PathResult, runInWorker } from "./baseline-load.js";
import { cpuLine, cpuSnapshot } from "./cpu.js";
import { directPayer, pipelinePayer } from "./paid.js";
import { benchDatabaseUrl, dropSchema, postgresUnavailable, redact } from "./postgres.js";
import { profileSection, startProfile } from "./profile.js";
import { scaleLine } from "./scale-line.js";

/**
 * The scale benchmark's baseline (docs/deploy.md#scale-baseline): on one devnet, side by side in one run,
 *   - bare `@x402/fetch` clients (one per concurrent slot) paying the weather service directly,
 *   - paid chat turns through one service instance, then spread over two (`npm run cluster`'s
 *     processes, ledger on PostgreSQL),
 * the same number of payments at the same concurrency. Each chat turn is timed by the client per
 * phase from the stream (to `quoted`: model, discovery, the unpaid probe, admission, balance,
 * signing and the reservation, whose sums the `quoted` line carries; to `settled`: the paid call
 * and the facilitator's settlement on chain; to `d:`: the answer), each bare payment to its 402
 * and to its paid answer.
 * Then the paid path alone, sequential: one payment by a bare client, one through this service's
 * pipeline (bench/paid.ts, ledger on PostgreSQL), alternating, `rounds` each.
 * Afterwards the payer's decrease on chain must equal what every path paid. The report's last line
 * is the three ratios against the bare client (bench/scale-line.ts).
 */
export interface BaselineOptions {
  /** Payments per path (default 100). */
  turns: number;
  /** In flight at once (default 50). */
  concurrency: number;
  /** Sequential payments per side for the paid path (default 100). */
  rounds: number;
  /**
   * Payments per path made first at the same concurrency, untimed and paid (default: the
   * concurrency), so each path is measured warm.
   */
  warmup: number;
  /**
   * Where to write CPU profiles (docs/benchmarks.md#profiles): each instance's whole life
   * (`instance-N/*.cpuprofile`, Node's `--cpu-prof`) and this process's (the devnet, the bare
   * clients, the paid path's pipeline) per path (`bench-<path>.cpuprofile`). None when absent.
   */
  profileDir?: string;
}

const now = () => performance.now();
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))] ?? Number.NaN;
};
const f = (n: number) => (Number.isNaN(n) ? "-" : n.toFixed(0));

/**
 * One path's payments, in the load worker: its warm-up, then the measured run, with this thread
 * (the devnet's) profiled and every process's CPU read over the measured run only.
 */
async function measure(options: BaselineOptions, job: LoadJob, pids: number[]): Promise<Measured> {
  const file = `bench-${job.name.replace(/[^a-z0-9]+/gi, "-").replace(/-$/, "")}`;
  let before = cpuSnapshot(pids);
  let profiling: Promise<() => Promise<void>> | undefined;
  const result = await runInWorker({ ...job, warmup: options.warmup }, () => {
    before = cpuSnapshot(pids);
    if (options.profileDir) profiling = startProfile(options.profileDir, file);
  });
  await (await profiling)?.();
  const ok = result.samples.filter((s) => s.ok).length;
  return { ...result, cpu: cpuLine(before, cpuSnapshot(pids), ok, availableParallelism()) };
}

/** A path's result and where its CPU went (bench/cpu.ts). */
type Measured = PathResult & { cpu: string };

const rate = (r: PathResult) => (r.samples.filter((s) => s.ok).length / r.wallMs) * 1000;

/** The paid path alone: p50 of each side's sequential payments. */
interface PaidPath {
  direct: number[];
  pipeline: number[];
}

function report(results: Measured[], paid: PaidPath, options: BaselineOptions, notes: string[]): string[] {
  const lines = [
    `### Scale baseline: bare @x402/fetch clients vs paid chats through one and two instances`,
    "",
    `${options.turns} payments per path, ${options.concurrency} at once (after ${options.warmup} untimed, paid, at the same concurrency: each path measured warm), one devnet (EVM, the weather service at $0.01), one payer wallet; instances are \`npm run cluster\` processes on PostgreSQL, offline model.`,
    "",
    "| path | paid/s | p50 ms | p95 ms | failed | median per phase (ms) |",
    "|---|---|---|---|---|---|",
  ];
  for (const r of results) {
    const ok = r.samples.filter((s) => s.ok);
    const phases = Object.keys(ok[0]?.phases ?? {})
      .map(
        (p) =>
          `${p} ${f(
            pct(
              ok.map((s) => s.phases[p] ?? Number.NaN),
              50,
            ),
          )}`,
      )
      .join(", ");
    lines.push(
      `| ${r.name} | ${rate(r).toFixed(1)} | ${f(
        pct(
          ok.map((s) => s.ms),
          50,
        ),
      )} | ${f(
        pct(
          ok.map((s) => s.ms),
          95,
        ),
      )} | ${r.samples.length - ok.length} | ${phases} |`,
    );
  }
  const [bare, one, two] = results;
  if (bare && one && two)
    lines.push(
      "",
      `- throughput, chats through one instance / bare clients: ${(rate(one) / rate(bare)).toFixed(2)}; through two instances / bare: ${(rate(two) / rate(bare)).toFixed(2)}; two instances / one: ${(rate(two) / rate(one)).toFixed(2)}`,
    );
  lines.push("", ...results.map((r) => `- ${r.name}: ${r.cpu}`));
  const p = (xs: number[], q: number) => pct(xs, q).toFixed(1);
  lines.push(
    "",
    `Paid path alone: ${options.rounds} payments per side, sequential, alternating; the pipeline's ledger on PostgreSQL.`,
    "",
    "| path | p50 ms | p99 ms |",
    "|---|---|---|",
    `| bare @x402/fetch client | ${p(paid.direct, 50)} | ${p(paid.direct, 99)} |`,
    `| this service's pipeline | ${p(paid.pipeline, 50)} | ${p(paid.pipeline, 99)} |`,
  );
  return [
    ...lines,
    "",
    ...notes,
    "",
    scaleLine({
      bareRate: bare ? rate(bare) : Number.NaN,
      oneRate: one ? rate(one) : Number.NaN,
      twoRate: two ? rate(two) : Number.NaN,
      pipelineP50: pct(paid.pipeline, 50),
      directP50: pct(paid.direct, 50),
    }),
  ];
}

export async function baselineScenario(
  options: BaselineOptions = { turns: 100, concurrency: 50, rounds: 100, warmup: 50 },
): Promise<string[]> {
  const databaseUrl = benchDatabaseUrl();
  const reason = await postgresUnavailable(databaseUrl);
  if (reason)
    return [
      `### Scale baseline`,
      "",
      `- skipped: the instances share a PostgreSQL ledger and none answers at ${redact(databaseUrl)} (${reason}).`,
    ];
  const schema = `bench_baseline_${randomBytes(4).toString("hex")}`;
  const cluster = await startCluster({
    instances: 2,
    solana: false,
    output: () => {},
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      DATABASE_SCHEMA: schema,
      MODEL_PROVIDER: "offline",
      LOG_LEVEL: "warn",
      RATE_LIMIT_POINTS: "1000000",
      RATE_LIMIT_ANONYMOUS_POINTS: "1000000",
      LIMIT_DAILY: "1000",
      RECONCILE_INTERVAL_MS: "3600000",
      // As patient as the bare clients (which have no timeout): a slow settlement is waited for,
      // not cut at the default 10 s and recorded unclear.
      SERVICE_TIMEOUT_MS: "30000",
      MIN_TIME_LEFT_MS: "35000",
      REQUEST_TIMEOUT_MS: "120000",
    },
    ...(options.profileDir
      ? {
          nodeArgs: (i: number) => [
            "--cpu-prof",
            `--cpu-prof-dir=${join(options.profileDir as string, `instance-${i}`)}`,
          ],
        }
      : {}),
  });
  let store: Store | undefined;
  let closePipeline: (() => Promise<void>) | undefined;
  try {
    const m = cluster.devnet.manifest;
    const weather = `${m.services.find((s) => s.id === "weather")?.url}?city=Paris`;
    const payer = walletAddress(cluster.devnet, "evm", "payer");
    const [first, second] = cluster.instances.map((i) => i.url);
    if (!first || !second) throw new Error("the cluster has fewer than two instances");
    const payerKey = cluster.devnet.secrets.evm.payer;
    if (!payerKey) throw new Error("no payer key");
    const shape = { turns: options.turns, concurrency: options.concurrency };
    // The paid path's pipeline, in this process, on a ledger of its own.
    store = await openStore({ databaseUrl, schema: `${schema}_paid` });
    const pipeline = pipelinePayer(cluster.devnet, store, "baseline");
    closePipeline = pipeline.close;
    const direct = directPayer(cluster.devnet);
    // Warm-up: each path once (connections, caches, the first discovery).
    await Promise.all([
      directPayer(cluster.devnet)(),
      chatTurn(first, cluster.token, payer),
      chatTurn(second, cluster.token, payer),
    ]);
    for (let i = 0; i < 5; i++) {
      await direct();
      await pipeline.pay(-i - 1);
      await pipeline.written();
    }
    const before = await evmUsdcBalance(cluster.devnet, payer);
    const pids = cluster.instances.map((i) => i.pid);
    const results = [
      await measure(
        options,
        {
          kind: "bare",
          name: "bare @x402/fetch clients",
          ...shape,
          url: weather,
          network: m.evm.network,
          payerKey,
        },
        pids,
      ),
      await measure(
        options,
        {
          kind: "chat",
          name: "paid chats, one instance",
          ...shape,
          bases: [first],
          token: cluster.token,
          wallet: payer,
        },
        pids,
      ),
      await measure(
        options,
        {
          kind: "chat",
          name: "paid chats, two instances",
          ...shape,
          bases: [first, second],
          token: cluster.token,
          wallet: payer,
        },
        pids,
      ),
    ];
    const paidPath: PaidPath = { direct: [], pipeline: [] };
    await profileSection(options.profileDir, "bench-paid-path", async () => {
      for (let i = 0; i < options.rounds; i++) {
        let start = now();
        await direct();
        paidPath.direct.push(now() - start);
        start = now();
        await pipeline.pay(i);
        paidPath.pipeline.push(now() - start);
        await pipeline.written();
      }
    });
    const paid =
      results.reduce((n, r) => n + r.samples.filter((s) => s.ok).length + (r.warmedUp ?? 0), 0) +
      2 * options.rounds;
    const spent = before - (await evmUsdcBalance(cluster.devnet, payer));
    const price = BigInt(m.services.find((s) => s.id === "weather")?.priceAtomic ?? "0");
    const notes = [
      `- chain check: the payer's USDC fell by ${spent} atomic units for ${paid} successful payments at ${price} (${spent === BigInt(paid) * price ? "equal" : "NOT EQUAL"}).`,
    ];
    if (spent !== BigInt(paid) * price) process.exitCode = 1;
    return report(results, paidPath, options, notes);
  } finally {
    await closePipeline?.();
    await store?.close();
    await cluster.stop();
    await dropSchema(databaseUrl, schema);
    await dropSchema(databaseUrl, `${schema}_paid`);
  }
}
