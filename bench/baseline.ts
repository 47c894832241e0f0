import { randomBytes } from "node:crypto";
import { x402Client } from "@x402/core/client";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import { privateKeyToAccount } from "viem/accounts";
import { type Cluster, startCluster } from "../scripts/cluster.js";
import { evmUsdcBalance, walletAddress } from "../src/devnet/testing/index.js";
import { openStore, type Store } from "../src/store/index.js";
import { directPayer, pipelinePayer } from "./paid.js";
import { benchDatabaseUrl, dropSchema, postgresUnavailable, redact } from "./postgres.js";
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
}

interface Sample {
  ms: number;
  ok: boolean;
  /** Phase name -> ms since the previous phase. */
  phases: Record<string, number>;
  /** Why it failed (a finish reason, an HTTP status, an error). */
  failure?: string;
}

interface PathResult {
  name: string;
  wallMs: number;
  samples: Sample[];
}

const now = () => performance.now();
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))] ?? Number.NaN;
};
const f = (n: number) => (Number.isNaN(n) ? "-" : n.toFixed(0));

/** Run `turns` tasks, `concurrency` at a time; task i gets its slot (0..concurrency-1). */
async function measure(
  name: string,
  options: BaselineOptions,
  task: (slot: number, i: number) => Promise<Sample>,
): Promise<PathResult> {
  const samples: Sample[] = [];
  let next = 0;
  const started = now();
  await Promise.all(
    Array.from({ length: options.concurrency }, async (_, slot) => {
      while (next < options.turns) {
        const i = next++;
        const sample = await task(slot, i).catch(
          (error: unknown): Sample => ({
            ms: Number.NaN,
            ok: false,
            phases: {},
            failure: error instanceof Error ? `${error.name}: ${error.message}`.slice(0, 80) : String(error),
          }),
        );
        if (sample.failure) process.stderr.write(`baseline: ${name}: ${sample.failure}\n`);
        samples.push(sample);
      }
    }),
  );
  return { name, wallMs: now() - started, samples };
}

/** One bare client: `@x402/fetch` over a fetch that notes when the 402 came back. */
function bareClient(cluster: Cluster): (url: string) => Promise<Sample> {
  const m = cluster.devnet.manifest;
  const key = cluster.devnet.secrets.evm.payer;
  if (!key) throw new Error("no payer key");
  let quoted = 0;
  const timing: typeof fetch = async (input, init) => {
    const response = await fetch(input, init);
    if (response.status === 402) quoted = now();
    return response;
  };
  const client = new x402Client().register(m.evm.network, new ExactEvmScheme(privateKeyToAccount(key)));
  client.setSpendControls(false);
  const paying = wrapFetchWithPayment(timing, client);
  return async (url) => {
    const start = now();
    const response = await paying(url);
    await response.text();
    const end = now();
    return {
      ms: end - start,
      ok: response.status === 200,
      ...(response.status === 200 ? {} : { failure: `HTTP ${response.status}` }),
      phases: { "to 402": quoted - start, "to paid answer": end - quoted },
    };
  };
}

/** One paid chat turn, timed per phase from the stream's lines as they arrive. */
async function chatTurn(base: string, token: string, wallet: string): Promise<Sample> {
  const start = now();
  const response = await fetch(`${base}/api/chat`, {
    method: "POST",
    headers: { "Content-Type": "application/json", Authorization: `Bearer ${token}` },
    body: JSON.stringify({
      messages: [{ role: "user", content: "What's the weather in Paris?" }],
      walletAddress: wallet,
    }),
  });
  const at: Record<string, number> = {};
  let text = "";
  const decoder = new TextDecoder();
  const reader = response.body?.getReader();
  for (;;) {
    const chunk = await reader?.read();
    if (!chunk || chunk.done) break;
    text += decoder.decode(chunk.value, { stream: true });
    const t = now();
    for (const status of ["quoted", "settled"])
      if (at[status] === undefined && text.includes(`"status":"${status}"`)) at[status] = t;
    if (at.d === undefined && /^d:/m.test(text)) at.d = t;
  }
  // Read once the stream is over: a line may arrive in pieces.
  const d = /^d:(.*)$/m.exec(text)?.[1];
  const finish = d
    ? ((JSON.parse(d) as { finishReason?: string }).finishReason ?? "no finish reason")
    : `HTTP ${response.status}, no d: ${text.slice(0, 300)}`;
  const q = at.quoted ?? Number.NaN;
  const set = at.settled ?? Number.NaN;
  const end = at.d ?? now();
  return {
    ms: end - start,
    ok: finish === "payment-complete",
    ...(finish === "payment-complete" ? {} : { failure: finish }),
    phases: { "to quoted": q - start, "to settled": set - q, "to d:": end - set },
  };
}

const rate = (r: PathResult) => (r.samples.filter((s) => s.ok).length / r.wallMs) * 1000;

/** The paid path alone: p50 of each side's sequential payments. */
interface PaidPath {
  direct: number[];
  pipeline: number[];
}

function report(results: PathResult[], paid: PaidPath, options: BaselineOptions, notes: string[]): string[] {
  const lines = [
    `### Scale baseline: bare @x402/fetch clients vs paid chats through one and two instances`,
    "",
    `${options.turns} payments per path, ${options.concurrency} at once, one devnet (EVM, the weather service at $0.01), one payer wallet; instances are \`npm run cluster\` processes on PostgreSQL, offline model.`,
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
  options: BaselineOptions = { turns: 100, concurrency: 50, rounds: 100 },
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
  });
  let store: Store | undefined;
  let closePipeline: (() => Promise<void>) | undefined;
  try {
    const m = cluster.devnet.manifest;
    const weather = `${m.services.find((s) => s.id === "weather")?.url}?city=Paris`;
    const payer = walletAddress(cluster.devnet, "evm", "payer");
    const [first, second] = cluster.instances.map((i) => i.url);
    if (!first || !second) throw new Error("the cluster has fewer than two instances");
    const clients = Array.from({ length: options.concurrency }, () => bareClient(cluster));
    // The paid path's pipeline, in this process, on a ledger of its own.
    store = await openStore({ databaseUrl, schema: `${schema}_paid` });
    const pipeline = pipelinePayer(cluster.devnet, store, "baseline");
    closePipeline = pipeline.close;
    const direct = directPayer(cluster.devnet);
    // Warm-up: each path once (connections, caches, the first discovery).
    await Promise.all([
      clients[0]?.(weather),
      chatTurn(first, cluster.token, payer),
      chatTurn(second, cluster.token, payer),
    ]);
    for (let i = 0; i < 5; i++) {
      await direct();
      await pipeline.pay(-i - 1);
    }
    const before = await evmUsdcBalance(cluster.devnet, payer);
    const results = [
      await measure("bare @x402/fetch clients", options, (slot) =>
        (clients[slot] as (u: string) => Promise<Sample>)(weather),
      ),
      await measure("paid chats, one instance", options, () => chatTurn(first, cluster.token, payer)),
      await measure("paid chats, two instances", options, (_, i) =>
        chatTurn(i % 2 ? second : first, cluster.token, payer),
      ),
    ];
    const paidPath: PaidPath = { direct: [], pipeline: [] };
    for (let i = 0; i < options.rounds; i++) {
      let start = now();
      await direct();
      paidPath.direct.push(now() - start);
      start = now();
      await pipeline.pay(i);
      paidPath.pipeline.push(now() - start);
    }
    const paid = results.reduce((n, r) => n + r.samples.filter((s) => s.ok).length, 0) + 2 * options.rounds;
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
