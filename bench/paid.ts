import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { x402Client } from "@x402/core/client";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import { privateKeyToAccount } from "viem/accounts";
import { createPaymentTools, type TurnContext } from "../src/agent/index.js";
import { bootstrap } from "../src/bootstrap.js";
import { loadConfig } from "../src/config/index.js";
import { type Devnet, startDevnet } from "../src/devnet/index.js";
import { silentLogger } from "../src/log/index.js";
import { createPayments, SUGGESTED_LIMITS } from "../src/payments/index.js";
import { closeServer, listen } from "../src/service.js";
import { openStore, type Store } from "../src/store/index.js";
import { benchDatabaseUrl, dropSchema, postgresUnavailable, redact, seedPayments } from "./postgres.js";

/**
 * The paid path, side by side in one run: the official `@x402/fetch` paying a devnet service
 * directly, and this service's pipeline (quote, policy, balance, ledger, sign, settle, record)
 * paying the same service, with its ledger on embedded PGlite (in memory, and on disk as
 * `npm start` keeps it) and on a PostgreSQL server
 * (`DATABASE_URL`, or the local one; skipped when none answers), there once for a wallet with no
 * earlier payments and once for a wallet with `SEEDED_PAYMENTS` earlier payments in the last 24 h
 * (the budget read must not grow with them). Then whole chat turns with a payment through the
 * offline model. `ledgers` picks some of the paths (PAID_LEDGERS keys); default all.
 */
export const PAID_LEDGERS = ["pglite-memory", "pglite-disk", "postgres", "postgres-busy"] as const;
export type PaidLedger = (typeof PAID_LEDGERS)[number];

/** Earlier payments of the busy wallet, spread over the last 24 h (settled, one atomic unit each). */
const SEEDED_PAYMENTS = 20_000;
const ms = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e6;
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))] ?? Number.NaN;
};
const f = (n: number) => n.toFixed(1);

/** The busy wallet's p50 against the fresh one's, both on the PostgreSQL server. */
function busyLine(paths: { label: string; times: number[] }[]): string[] {
  const fresh = paths.find((p) => p.label === "PostgreSQL server");
  const busy = paths.find((p) => p.label.startsWith("PostgreSQL server, wallet with"));
  if (!fresh || !busy) return [];
  const ratio = pct(busy.times, 50) / pct(fresh.times, 50);
  return [
    `- PostgreSQL, wallet with ${SEEDED_PAYMENTS.toLocaleString("en")} earlier payments / with none, at p50: ${ratio.toFixed(2)} (${f(pct(busy.times, 50))} vs ${f(pct(fresh.times, 50))} ms; target: no growth)`,
  ];
}

/** The official client paying `url` (the weather service) with the devnet's payer, once per call. */
export function directPayer(devnet: Devnet): () => Promise<void> {
  const { m, url, key } = payerOf(devnet);
  const client = new x402Client().register(
    m.evm.network,
    new ExactEvmScheme(privateKeyToAccount(key), { rpcUrl: m.evm.rpcUrl }),
  );
  client.setSpendControls(false);
  const direct = wrapFetchWithPayment(fetch, client);
  return async () => {
    const res = await direct(url);
    if (res.status !== 200) throw new Error(`direct payment failed: ${res.status}`);
    await res.arrayBuffer();
  };
}

function payerOf(devnet: Devnet) {
  const m = devnet.manifest;
  const weather = m.services.find((s) => s.id === "weather");
  const payer = m.evm.wallets.find((w) => w.role === "payer");
  const key = payer ? devnet.secrets.evm[payer.name] : undefined;
  if (!weather || !payer || !key) throw new Error("devnet has no weather service or payer");
  return { m, weather, payer, key, url: `${weather.url}?city=Paris` };
}

/**
 * This service's payment pipeline (the pay tool over the payments face) paying the same service
 * with the same payer, its ledger in `store`. `pay(i)` makes one payment; `close` stops it.
 */
export function pipelinePayer(
  devnet: Devnet,
  store: Store,
  label: string,
): { pay: (i: number) => Promise<void>; written: () => Promise<void>; close: () => Promise<void> } {
  const { m, weather, payer, key, url } = payerOf(devnet);
  const payments = createPayments({
    ledger: store.ledger,
    delivered: store.delivered,
    discoveryUrls: [m.discoveryUrl],
    rpcUrls: { [m.evm.network]: m.evm.rpcUrl },
    assets: { [m.evm.network]: [m.evm.usdc] },
    allowPrivateOrigins: [new URL(weather.url).origin, new URL(m.facilitatorUrl).origin],
    signerKeys: [{ chain: "evm", privateKey: key, tokens: [m.devToken] }],
    preferredNetworks: [],
    limits: { ...SUGGESTED_LIMITS, allowedNetworks: [m.evm.network], allowedServices: "any" },
    maxTimeoutSeconds: 600,
    minTimeLeftMs: 0,
    serviceTimeoutMs: 15_000,
    reconcileIntervalMs: 3_600_000,
  });
  const tools = createPaymentTools(payments.face);
  // The settlement's record, written beside the answer as in a chat turn (which waits for it
  // before `d:`): `pay` ends at the answer, `written` waits for the record, outside the timing.
  const held: Promise<unknown>[] = [];
  const written = async () => void (await Promise.all(held.splice(0)));
  const pay = async (i: number) => {
    const ctx: TurnContext = {
      payer: {
        scopeId: `bench-${label}-${i}`,
        wallet: { chain: "evm", address: payer.address },
        bearerToken: m.devToken,
      },
      signal: new AbortController().signal,
      deadline: Date.now() + 50_000,
      now: Date.now,
      emitPayment: () => {},
      recordPayment: () => {},
      reportError: (e) => {
        throw e;
      },
      holdPayment: (work) => void held.push(work),
    };
    const tool = tools(ctx).pay_and_fetch;
    if (!tool?.execute) throw new Error("no pay tool");
    const out = (await tool.execute({ url }, { toolCallId: `t${i}`, messages: [], context: {} })) as {
      status: string;
    };
    if (out.status !== "paid") throw new Error(`pipeline did not pay: ${JSON.stringify(out)}`);
  };
  return { pay, written, close: () => payments.close() };
}

export async function paidScenario(
  rounds: number,
  ledgerKeys: readonly PaidLedger[] = PAID_LEDGERS,
): Promise<string[]> {
  const devnet = await startDevnet({ manifestPath: null, solana: false });
  try {
    const { m, payer } = payerOf(devnet);
    const directCall = directPayer(devnet);

    // The pipeline on each ledger: embedded PGlite (in memory), and a PostgreSQL server when one
    // answers. Every path pays the same service; rounds alternate so drift hits all equally.
    const diskDir = await mkdtemp(join(tmpdir(), "bench-paid-pglite-"));
    const wanted = new Set(ledgerKeys);
    const ledgers: { label: string; store: Store; dropSchema?: string }[] = [];
    if (wanted.has("pglite-memory")) {
      ledgers.push({
        label: "PGlite (embedded, in memory)",
        store: await openStore({ dataDir: "memory://" }),
      });
    }
    if (wanted.has("pglite-disk")) {
      // What `npm start` uses by default: PGlite with its data directory on disk.
      ledgers.push({
        label: "PGlite (embedded, on disk)",
        store: await openStore({ dataDir: join(diskDir, "pglite") }),
      });
    }
    const databaseUrl = benchDatabaseUrl();
    const unavailable =
      wanted.has("postgres") || wanted.has("postgres-busy")
        ? await postgresUnavailable(databaseUrl)
        : undefined;
    if (!unavailable) {
      for (const busy of [false, true]) {
        if (!wanted.has(busy ? "postgres-busy" : "postgres")) continue;
        const schema = `bench_paid_${randomBytes(4).toString("hex")}`;
        const store = await openStore({ databaseUrl, schema });
        if (busy) {
          await seedPayments(databaseUrl, schema, {
            wallet: payer.address,
            count: SEEDED_PAYMENTS,
            network: m.evm.network,
            asset: m.evm.usdc,
            now: new Date(),
          });
        }
        ledgers.push({
          label: busy
            ? `PostgreSQL server, wallet with ${SEEDED_PAYMENTS.toLocaleString("en")} payments in the last 24 h`
            : "PostgreSQL server",
          store,
          dropSchema: schema,
        });
      }
    }
    const paths = ledgers.map(({ label, store }) => ({
      label,
      ...pipelinePayer(devnet, store, label),
      times: [] as number[],
    }));

    // Warm every path, then alternate so drift hits all of them equally.
    for (let i = 0; i < 5; i++) {
      await directCall();
      for (const path of paths) {
        await path.pay(-i - 1);
        await path.written();
      }
    }
    const directTimes: number[] = [];
    for (let i = 0; i < rounds; i++) {
      const t = process.hrtime.bigint();
      await directCall();
      directTimes.push(ms(t));
      for (const path of paths) {
        const start = process.hrtime.bigint();
        await path.pay(i);
        path.times.push(ms(start));
        await path.written();
      }
    }
    for (const path of paths) await path.close();
    for (const ledger of ledgers) {
      await ledger.store.close();
      if (ledger.dropSchema) await dropSchema(databaseUrl, ledger.dropSchema);
    }
    await rm(diskDir, { recursive: true, force: true });

    // Whole chat turns with a payment, over HTTP, offline model.
    const running = await bootstrap(
      loadConfig({
        PAYMENTS: "devnet",
        DATA_DIR: "memory://",
        RATE_LIMIT_POINTS: "1000000",
        RATE_LIMIT_ANONYMOUS_POINTS: "1000000",
        PORT: "0",
      }),
      silentLogger,
      { devnet, devnetManifest: null },
    );
    const { server, url: base } = await listen(running.service.app, { host: "127.0.0.1", port: 0 });
    const body = JSON.stringify({
      messages: [{ role: "user", content: "What's the weather in Paris?" }],
      walletAddress: payer.address,
      spendingLimits: { daily: "100", perRequest: "1" },
    });
    const turnTimes: number[] = [];
    for (let i = 0; i < Math.max(10, Math.floor(rounds / 2)); i++) {
      const t = process.hrtime.bigint();
      const res = await fetch(`${base}/api/chat`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${m.devToken}` },
        body,
      });
      const text = await res.text();
      if (!text.includes('"finishReason":"payment-complete"'))
        throw new Error(`turn did not pay: ${text.slice(-300)}`);
      turnTimes.push(ms(t));
    }
    await closeServer(server);
    await running.service.shutdown();

    const d50 = pct(directTimes, 50);
    return [
      "### Paid path: this service's pipeline vs the official `@x402/fetch` paying the same devnet service",
      "",
      `EVM devnet, weather service ($0.01), ${rounds} payments per path, alternating, sequential.`,
      "",
      "| path | p50 ms | p99 ms | / direct at p50 |",
      "|---|---|---|---|",
      `| \`@x402/fetch\` direct | ${f(d50)} | ${f(pct(directTimes, 99))} | 1.00 |`,
      ...paths.map(
        ({ label, times }) =>
          `| pipeline, ledger on ${label} | ${f(pct(times, 50))} | ${f(pct(times, 99))} | ${(pct(times, 50) / d50).toFixed(2)} |`,
      ),
      "",
      ...paths.map(
        ({ label, times }) =>
          `- pipeline (${label}) / direct at p50: ${(pct(times, 50) / d50).toFixed(2)} (target <= 1.10)`,
      ),
      ...busyLine(paths),
      ...(unavailable
        ? [`- PostgreSQL row skipped: no server answers at ${redact(databaseUrl)} (${unavailable}).`]
        : []),
      "",
      "### One chat turn with a payment (offline model, over HTTP)",
      "",
      `| turns | p50 ms | p99 ms |`,
      "|---|---|---|",
      `| ${turnTimes.length} | ${f(pct(turnTimes, 50))} | ${f(pct(turnTimes, 99))} |`,
      "",
      "- target: p50 under 500 ms locally",
    ];
  } finally {
    await devnet.stop();
  }
}
