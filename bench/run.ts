import { spawn } from "node:child_process";
import { mkdirSync } from "node:fs";
import { resolve } from "node:path";
import { createInterface } from "node:readline";
import { baselineScenario } from "./baseline.js";
import { CHAT_BODY } from "./fixtures.js";
import { type LoadResult, runLoad } from "./load.js";
import { PAID_LEDGERS, type PaidLedger, paidScenario } from "./paid.js";
import { scaleScenario } from "./scale.js";

/**
 * `npm run bench`: each scenario side by side with its baseline, in one run. Prints a Markdown
 * report headed by its date (add it to bench/results/benchmarks-history.md and update the figures
 * of docs/benchmarks.md). Options: --duration=ms per load measurement (default
 * 5000), --rounds=N sequential paid calls per path, in the paid and the baseline scenarios
 * (default 100; fewer are not stable), --scale-turns=N and --scale-concurrency=N for the scale
 * scenario (default 200 and 50), --baseline-turns=N, --baseline-concurrency=N and --baseline-warmup=N
 * (untimed payments per path first; default: the concurrency) for the scale baseline
 * (bench/baseline.ts; default 100, 50 and 50), --only=chat,paid,scale,baseline to run some scenarios only,
 * --paid-ledgers=pglite-memory,pglite-disk,postgres,postgres-busy to run some of the paid paths only,
 * --profile=DIR to write CPU profiles of the baseline's processes (docs/benchmarks.md#profiles).
 * The baseline's report ends with its `scale:` line (bench/scale-line.ts). Exits 1 when a
 * scenario reports a failure (the scale scenario's failed turns or ledger/chain mismatch).
 */
const option = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split("=")[1];
const duration = Number(option("duration") ?? 5000);

async function startServers(script: string): Promise<{ urls: Record<string, string>; stop: () => void }> {
  const child = spawn(process.execPath, ["--import", "tsx", script], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const first = await new Promise<string>((resolve, reject) => {
    const rl = createInterface({ input: child.stdout });
    rl.once("line", resolve);
    child.once("exit", (code) => reject(new Error(`${script} exited with ${code}`)));
  });
  return { urls: JSON.parse(first), stop: () => child.kill("SIGTERM") };
}

const fmt = (n: number) => (Number.isNaN(n) ? "-" : n < 10 ? n.toFixed(2) : n.toFixed(1));

function row(name: string, r: LoadResult): string {
  return `| ${name} | ${r.rps.toFixed(0)} | ${fmt(r.ttfb.p50)} | ${fmt(r.ttfb.p99)} | ${fmt(r.total.p50)} | ${fmt(r.total.p99)} | ${r.errors} |`;
}

async function chatScenario(): Promise<string[]> {
  const servers = await startServers(new URL("./chat-servers.ts", import.meta.url).pathname);
  const out: string[] = [
    "### Chat endpoint (offline model, no payment) vs a bare Hono route streaming the same bytes, and vs a plain AI SDK route",
    "",
    `Response: ${servers.urls.bytes} bytes in ${servers.urls.lines} lines. ${duration / 1000} s per measurement after a 0.5 s warm-up.`,
    "",
    "| target | concurrency | req/s | TTFB p50 ms | TTFB p99 ms | to d: p50 ms | to d: p99 ms | errors |",
    "|---|---|---|---|---|---|---|---|",
  ];
  const ratios: string[] = [];
  try {
    for (const concurrency of [1, 50]) {
      const common = { body: CHAT_BODY, concurrency, durationMs: duration };
      const bare = await runLoad({ ...common, url: `${servers.urls.bare}/api/chat` });
      const plain = await runLoad({ ...common, url: `${servers.urls.plain}` });
      const chat = await runLoad({ ...common, url: `${servers.urls.chat}/api/chat` });
      out.push(
        row(`bare route (same bytes) | ${concurrency}`, bare),
        row(`plain AI SDK streamText route | ${concurrency}`, plain),
        row(`/api/chat | ${concurrency}`, chat),
      );
      ratios.push(
        `- concurrency ${concurrency}: /api/chat throughput is ${(chat.rps / bare.rps).toFixed(2)} of the bare route (target >= 0.70) and ${(chat.rps / plain.rps).toFixed(2)} of the plain AI SDK route; TTFB p50 ${fmt(chat.ttfb.p50)} ms`,
      );
    }
  } finally {
    servers.stop();
  }
  return [...out, "", ...ratios];
}

const rounds = Number(option("rounds") ?? 100);
const paidLedgers = (option("paid-ledgers")?.split(",").filter(Boolean) ?? [...PAID_LEDGERS]) as PaidLedger[];
const unknownLedgers = paidLedgers.filter((key) => !(PAID_LEDGERS as readonly string[]).includes(key));
if (unknownLedgers.length > 0) {
  process.stderr.write(
    `unknown paid ledger ${unknownLedgers.join(", ")}; known: ${PAID_LEDGERS.join(", ")}\n`,
  );
  process.exit(2);
}
const scenarios: Record<string, () => Promise<string[]>> = {
  chat: chatScenario,
  paid: () => paidScenario(rounds, paidLedgers),
  scale: () =>
    scaleScenario({
      turns: Number(option("scale-turns") ?? 200),
      concurrency: Number(option("scale-concurrency") ?? 50),
      wallets: 10,
    }),
  baseline: () =>
    baselineScenario({
      turns: Number(option("baseline-turns") ?? 100),
      concurrency: Number(option("baseline-concurrency") ?? 50),
      warmup: Number(option("baseline-warmup") ?? option("baseline-concurrency") ?? 50),
      rounds,
      ...(option("profile") ? { profileDir: resolve(option("profile") as string) } : {}),
    }),
};
if (option("profile")) mkdirSync(resolve(option("profile") as string), { recursive: true });
const only = option("only")?.split(",").filter(Boolean) ?? Object.keys(scenarios);
const unknown = only.filter((name) => !Object.hasOwn(scenarios, name));
if (unknown.length > 0) {
  process.stderr.write(
    `unknown scenario ${unknown.join(", ")}; known: ${Object.keys(scenarios).join(", ")}\n`,
  );
  process.exit(2);
}
const report = [`## Run of ${new Date().toISOString()} (node ${process.version})`];
for (const name of only) report.push("", ...((await scenarios[name]?.()) ?? []));
process.stdout.write(`${report.join("\n")}\n`);
// The devnet's chains keep handles open; the report is complete.
process.exit(process.exitCode ?? 0);
