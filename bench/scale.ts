import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createPublicClient, createWalletClient, erc20Abi, http } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { hardhat } from "viem/chains";
import { bootstrap } from "../src/bootstrap.js";
import { loadConfig } from "../src/config/index.js";
import { type Devnet, startDevnet } from "../src/devnet/index.js";
import { evmUsdcBalance, walletAddress } from "../src/devnet/testing/index.js";
import { silentLogger } from "../src/log/index.js";
import { LEDGER_STATUSES } from "../src/payments/index.js";
import { closeServer, listen } from "../src/service.js";
import { benchDatabaseUrl, dropSchema, postgresUnavailable, redact } from "./postgres.js";

/**
 * Scale: many paid chat turns at once, spread over several wallets, with the ledger on embedded
 * PGlite and then on a PostgreSQL server. The devnet funds only two payers, so the bench makes
 * fresh EVM keys, funds them with DevUSDC from the devnet's payer (a plain ERC-20 transfer; they
 * need no gas: the facilitator sends the EIP-3009 transfers) and hands them to the service as
 * server-held keys through SIGNERS_FILE (`PAYMENTS=external` pointed at the devnet), one bearer
 * token per wallet. Afterwards the ledger is checked against the chain: per wallet, the settled
 * rows add up to its USDC decrease, and the merchant's increase equals the total settled.
 */
export interface ScaleOptions {
  /** Measured turns in all (default 200). */
  turns: number;
  /** Turns in flight at once (default 50). */
  concurrency: number;
  /** Wallets the turns are spread over, round robin (default 10). */
  wallets: number;
}

const ms = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e6;
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))] ?? Number.NaN;
};
const f = (n: number) => (Number.isNaN(n) ? "-" : n.toFixed(1));
const usd = (atomic: bigint) => `$${(Number(atomic) / 1e6).toFixed(2)}`;

const CITIES = ["Paris", "Berlin", "Tokyo", "Lima", "Oslo", "Cairo", "Sydney", "Toronto", "Madrid", "Seoul"];
/** USDC each fresh wallet gets: far more than both runs spend. */
const FUNDING_ATOMIC = 20_000_000n;

interface BenchWallet {
  privateKey: `0x${string}`;
  address: `0x${string}`;
  token: string;
}

interface TurnFailure {
  turn: number;
  wallet: string;
  detail: string;
}

interface RunResult {
  store: string;
  turns: number;
  wallMs: number;
  times: number[];
  failures: TurnFailure[];
  /** Ledger vs chain, one line per problem; empty when they agree. */
  mismatches: string[];
  settledRows: number;
  settledAtomic: bigint;
  /** Per settled row, ms from its first ledger entry (the reservation) to `settled`. */
  payTimes: number[];
  otherRows: Record<string, number>;
}

export async function scaleScenario(options: Partial<ScaleOptions> = {}): Promise<string[]> {
  const turns = options.turns ?? 200;
  const concurrency = options.concurrency ?? 50;
  const walletCount = options.wallets ?? 10;
  const databaseUrl = benchDatabaseUrl();
  const devnet = await startDevnet({ manifestPath: null, solana: false });
  const dir = await mkdtemp(join(tmpdir(), "bench-scale-"));
  try {
    const m = devnet.manifest;
    const wallets = await fundWallets(devnet, walletCount);
    const signersFile = join(dir, "signers.json");
    await writeFile(
      signersFile,
      JSON.stringify(wallets.map((w) => ({ chain: "evm", privateKey: w.privateKey, tokens: [w.token] }))),
      { mode: 0o600 },
    );
    const origins = [m.facilitatorUrl, ...m.services.map((s) => s.url)].map((u) => new URL(u).origin);
    const env: Record<string, string> = {
      PAYMENTS: "external",
      MODEL_PROVIDER: "offline",
      DATA_DIR: "memory://",
      PORT: "0",
      RATE_LIMIT_POINTS: "1000000",
      RATE_LIMIT_ANONYMOUS_POINTS: "1000000",
      RPC_URLS: `${m.evm.network}=${m.evm.rpcUrl}`,
      ASSETS: `${m.evm.network}=${m.evm.usdc}`,
      DISCOVERY_URLS: m.discoveryUrl,
      ALLOW_PRIVATE_ORIGINS: [...new Set(origins)].join(","),
      SIGNERS_FILE: signersFile,
      // The reconciler stays out of the way: nothing should be unclear.
      RECONCILE_INTERVAL_MS: "3600000",
    };
    const shape = { turns, concurrency, wallets };

    const results: RunResult[] = [];
    const notes: string[] = [];
    results.push(await runOnce(devnet, "PGlite (embedded, in memory)", env, shape));

    const reason = await postgresUnavailable(databaseUrl);
    if (reason) {
      notes.push(`- PostgreSQL row skipped: no server answers at ${redact(databaseUrl)} (${reason}).`);
    } else {
      const schema = `bench_scale_${randomBytes(4).toString("hex")}`;
      try {
        results.push(
          await runOnce(
            devnet,
            "PostgreSQL server",
            { ...env, DATABASE_URL: databaseUrl, DATABASE_SCHEMA: schema },
            shape,
          ),
        );
      } finally {
        await dropSchema(databaseUrl, schema);
      }
    }
    return report(results, notes, { turns, concurrency, walletCount, services: m.services });
  } finally {
    await rm(dir, { recursive: true, force: true });
    await devnet.stop();
  }
}

/** Fresh EVM keys, each funded with DevUSDC by the devnet's payer (plain ERC-20 transfers). */
async function fundWallets(devnet: Devnet, count: number): Promise<BenchWallet[]> {
  const m = devnet.manifest;
  const payer = m.evm.wallets.find((w) => w.role === "payer");
  const key = payer ? devnet.secrets.evm[payer.name] : undefined;
  if (!payer || !key) throw new Error("devnet has no funded payer");
  const chain = { ...hardhat, id: m.evm.chainId };
  const transport = http(m.evm.rpcUrl);
  const sender = createWalletClient({ account: privateKeyToAccount(key), chain, transport });
  const reader = createPublicClient({ chain, transport });
  const wallets: BenchWallet[] = [];
  for (let i = 0; i < count; i++) {
    const privateKey = generatePrivateKey();
    const address = privateKeyToAccount(privateKey).address;
    const hash = await sender.writeContract({
      address: m.evm.usdc,
      abi: erc20Abi,
      functionName: "transfer",
      args: [address, FUNDING_ATOMIC],
    });
    const receipt = await reader.waitForTransactionReceipt({ hash });
    if (receipt.status !== "success") throw new Error(`funding ${address} failed: ${hash}`);
    wallets.push({ privateKey, address, token: `bench-scale-${i}-${randomBytes(12).toString("hex")}` });
  }
  for (const w of wallets) {
    const balance = await evmUsdcBalance(devnet, w.address);
    if (balance !== FUNDING_ATOMIC) throw new Error(`${w.address} holds ${balance}, not ${FUNDING_ATOMIC}`);
  }
  return wallets;
}

async function runOnce(
  devnet: Devnet,
  store: string,
  env: Record<string, string>,
  shape: { turns: number; concurrency: number; wallets: BenchWallet[] },
): Promise<RunResult> {
  const { wallets } = shape;
  const merchant = walletAddress(devnet, "evm", "merchant");
  const balances = () =>
    Promise.all([merchant, ...wallets.map((w) => w.address)].map((a) => evmUsdcBalance(devnet, a)));
  const before = await balances();

  const running = await bootstrap(loadConfig(env), silentLogger);
  const { server, url: base } = await listen(running.service.app, { host: "127.0.0.1", port: 0 });
  const failures: TurnFailure[] = [];
  const times: number[] = [];
  let wallMs = 0;
  try {
    // Turn i (negative for warm-ups) from wallet w.
    const turn = async (i: number, w: number): Promise<number> => {
      const wallet = wallets[w % wallets.length] as BenchWallet;
      const t = process.hrtime.bigint();
      const detail = await chatTurn(base, wallet, CITIES[Math.abs(i) % CITIES.length] ?? "Paris");
      const elapsed = ms(t);
      if (detail) failures.push({ turn: i, wallet: wallet.address, detail });
      return elapsed;
    };
    // Warm-up: one turn per wallet at once (key loading, scheme clients, connections, plans).
    // They pay like the others and are part of the ledger check, not of the timings.
    await Promise.all(wallets.map((_, w) => turn(-1 - w, w)));
    let next = 0;
    const t0 = process.hrtime.bigint();
    await Promise.all(
      Array.from({ length: shape.concurrency }, async () => {
        for (let i = next++; i < shape.turns; i = next++) times.push(await turn(i, i));
      }),
    );
    wallMs = ms(t0);
  } finally {
    await closeServer(server);
  }

  const ledger = running.store?.ledger;
  if (!running.payments || !ledger) throw new Error("payments are off");
  const rows = await ledger.listByStatus(LEDGER_STATUSES);
  await running.service.shutdown();
  const after = await balances();

  const mismatches: string[] = [];
  const otherRows: Record<string, number> = {};
  const settledBy = new Map<string, bigint>();
  let settledRows = 0;
  const payTimes: number[] = [];
  for (const row of rows) {
    if (row.status !== "settled") {
      otherRows[row.status] = (otherRows[row.status] ?? 0) + 1;
      continue;
    }
    settledRows++;
    const first = row.history[0]?.at;
    const settled = row.history.find((h) => h.status === "settled")?.at;
    if (first && settled) payTimes.push(Date.parse(settled) - Date.parse(first));
    const key = row.wallet.toLowerCase();
    settledBy.set(key, (settledBy.get(key) ?? 0n) + row.amount);
    if (row.payTo.toLowerCase() !== merchant.toLowerCase())
      mismatches.push(`row ${row.paymentId} paid ${row.payTo}, not the merchant`);
  }
  const known = new Set(wallets.map((w) => w.address.toLowerCase()));
  for (const w of settledBy.keys())
    if (!known.has(w)) mismatches.push(`settled rows for a wallet the bench does not hold: ${w}`);
  let settledAtomic = 0n;
  wallets.forEach((w, i) => {
    const ledger = settledBy.get(w.address.toLowerCase()) ?? 0n;
    const chain = (before[i + 1] ?? 0n) - (after[i + 1] ?? 0n);
    settledAtomic += ledger;
    if (ledger !== chain)
      mismatches.push(`${w.address}: ledger settled ${ledger}, chain decrease ${chain} (atomic USDC)`);
  });
  const merchantIncrease = (after[0] ?? 0n) - (before[0] ?? 0n);
  if (merchantIncrease !== settledAtomic)
    mismatches.push(`merchant: chain increase ${merchantIncrease}, ledger settled ${settledAtomic}`);
  const expectedRows = shape.turns + wallets.length - failures.length;
  if (settledRows !== expectedRows)
    mismatches.push(`${settledRows} settled rows for ${expectedRows} turns that ended payment-complete`);
  return {
    store,
    turns: times.length,
    wallMs,
    times,
    failures,
    mismatches,
    settledRows,
    settledAtomic,
    payTimes,
    otherRows,
  };
}

/** One chat turn over HTTP; returns undefined when it paid, else what went wrong (exact lines). */
async function chatTurn(base: string, wallet: BenchWallet, city: string): Promise<string | undefined> {
  let text: string;
  let status: number;
  try {
    const res = await fetch(`${base}/api/chat`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${wallet.token}` },
      body: JSON.stringify({
        messages: [{ role: "user", content: `What's the weather in ${city}?` }],
        walletAddress: wallet.address,
        spendingLimits: { perTransaction: "1", perRequest: "1", daily: "100" },
      }),
    });
    status = res.status;
    text = await res.text();
  } catch (error) {
    return `fetch failed: ${error instanceof Error ? `${error.message} ${String(error.cause ?? "")}` : String(error)}`;
  }
  const lines = text.split("\n");
  const finish = lines.filter((l) => l.startsWith("d:")).at(-1);
  if (status === 200 && finish?.includes('"finishReason":"payment-complete"')) return undefined;
  const errors = lines.filter((l) => l.startsWith("e:"));
  const lastPayment = lines.filter((l) => l.startsWith("p:")).at(-1);
  return [`HTTP ${status}`, ...errors, lastPayment, finish ?? `no d: line: ${text.slice(0, 300)}`]
    .filter(Boolean)
    .join("\n    ");
}

function report(
  results: RunResult[],
  notes: string[],
  shape: {
    turns: number;
    concurrency: number;
    walletCount: number;
    services: Devnet["manifest"]["services"];
  },
): string[] {
  const weather = shape.services.find((s) => s.id === "weather");
  const out: string[] = [
    `### Scale: ${shape.concurrency} concurrent paid chats over ${shape.walletCount} wallets (offline model, over HTTP)`,
    "",
    `EVM devnet, weather service (${weather ? `$${weather.priceUsd}` : "?"}), ${shape.turns} turns per store, ` +
      `${shape.concurrency} in flight at once, wallets round robin (fresh keys funded with DevUSDC, held by the ` +
      `server through SIGNERS_FILE); ${shape.walletCount} warm-up turns first (checked, not timed). ` +
      "Service, devnet and load generator share one process.",
    "",
    "| ledger | turns | paid turns/s | turn p50 ms | turn p99 ms | failed turns | ledger == chain |",
    "|---|---|---|---|---|---|---|",
  ];
  for (const r of results) {
    const paid = r.turns - r.failures.filter((x) => x.turn >= 0).length;
    const rate = r.wallMs > 0 ? (paid / r.wallMs) * 1000 : Number.NaN;
    out.push(
      `| ${r.store} | ${r.turns} | ${f(rate)} | ${f(pct(r.times, 50))} | ${f(pct(r.times, 99))} | ${r.failures.length} | ${r.mismatches.length === 0 ? "yes" : "**NO**"} |`,
    );
  }
  out.push("");
  for (const r of results) {
    const others = Object.entries(r.otherRows).map(([s, n]) => `${n} ${s}`);
    out.push(
      `- ${r.store}: ${r.settledRows} settled ledger rows, ${usd(r.settledAtomic)} in all` +
        `${others.length > 0 ? `; other rows: ${others.join(", ")}` : "; no other rows"}; ` +
        (r.mismatches.length === 0
          ? "every wallet's settled sum equals its USDC decrease on chain, and the merchant's increase equals the total."
          : "ledger and chain DISAGREE:"),
    );
    out.push(
      `  - ledger time from reservation to settled (the paid call: service, facilitator verify and settle on chain): p50 ${f(pct(r.payTimes, 50))} ms, p99 ${f(pct(r.payTimes, 99))} ms`,
    );
    for (const mm of r.mismatches) out.push(`  - ${mm}`);
    if (r.failures.length > 0) {
      out.push(`  - ${r.failures.length} turns did not end payment-complete; first ones:`);
      for (const fl of r.failures.slice(0, 5))
        out.push(`    - turn ${fl.turn} (${fl.wallet}):\n    ${"```"}\n    ${fl.detail}\n    ${"```"}`);
    }
    if (r.failures.length > 0 || r.mismatches.length > 0) process.exitCode = 1;
  }
  out.push(...notes);
  return out;
}
