import { x402Client } from "@x402/core/client";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import { privateKeyToAccount } from "viem/accounts";
import type { TurnContext } from "../src/agent/index.js";
import { bootstrap } from "../src/bootstrap.js";
import { loadConfig } from "../src/config/index.js";
import { startDevnet } from "../src/devnet/index.js";
import { silentLogger } from "../src/log/index.js";
import { createPayments } from "../src/payments/index.js";
import { SUGGESTED_LIMITS } from "../src/payments/policy.js";
import { closeServer, listen } from "../src/service.js";
import { openStore } from "../src/store/index.js";

/**
 * The paid path, side by side in one run: the official `@x402/fetch` paying a devnet service
 * directly, and this service's pipeline (quote, policy, balance, ledger, sign, settle, record)
 * paying the same service. Then whole chat turns with a payment through the offline model.
 */
const ms = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e6;
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))] ?? Number.NaN;
};
const f = (n: number) => n.toFixed(1);

export async function paidScenario(rounds: number): Promise<string[]> {
  const devnet = await startDevnet({ manifestPath: null, solana: false });
  try {
    const m = devnet.manifest;
    const weather = m.services.find((s) => s.id === "weather");
    const payer = m.evm.wallets.find((w) => w.role === "payer");
    const key = payer ? devnet.secrets.evm[payer.name] : undefined;
    if (!weather || !payer || !key) throw new Error("devnet has no weather service or payer");
    const url = `${weather.url}?city=Paris`;

    const client = new x402Client().register(
      m.evm.network,
      new ExactEvmScheme(privateKeyToAccount(key), { rpcUrl: m.evm.rpcUrl }),
    );
    client.setSpendControls(false);
    const direct = wrapFetchWithPayment(fetch, client);

    const store = await openStore({ dataDir: "memory://" });
    const payments = createPayments({
      ledger: store.ledger,
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
    const tools = (requestId: string) => {
      const ctx: TurnContext = {
        requestId,
        wallet: { chain: "evm", address: payer.address },
        bearerToken: m.devToken,
        signal: new AbortController().signal,
        deadline: Date.now() + 50_000,
        now: Date.now,
        emitPayment: () => {},
        recordPayment: () => {},
        reportError: (e) => {
          throw e;
        },
      };
      return payments.tools(ctx);
    };
    const pipelineCall = async (i: number) => {
      const pay = tools(`bench-${i}`).pay_and_fetch;
      if (!pay?.execute) throw new Error("no pay tool");
      const out = (await pay.execute({ url }, { toolCallId: `t${i}`, messages: [] })) as { status: string };
      if (out.status !== "paid") throw new Error(`pipeline did not pay: ${JSON.stringify(out)}`);
    };
    const directCall = async () => {
      const res = await direct(url);
      if (res.status !== 200) throw new Error(`direct payment failed: ${res.status}`);
      await res.arrayBuffer();
    };

    // Warm both paths, then alternate so drift hits both equally.
    for (let i = 0; i < 5; i++) {
      await directCall();
      await pipelineCall(-i - 1);
    }
    const directTimes: number[] = [];
    const pipelineTimes: number[] = [];
    for (let i = 0; i < rounds; i++) {
      let t = process.hrtime.bigint();
      await directCall();
      directTimes.push(ms(t));
      t = process.hrtime.bigint();
      await pipelineCall(i);
      pipelineTimes.push(ms(t));
    }
    await payments.close();
    await store.close();

    // Whole chat turns with a payment, over HTTP, offline model.
    const running = await bootstrap(
      loadConfig({ PAYMENTS: "devnet", DATA_DIR: "memory://", RATE_LIMIT_POINTS: "1000000", PORT: "0" }),
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
    const p50 = pct(pipelineTimes, 50);
    return [
      "### Paid path: this service's pipeline vs the official `@x402/fetch` paying the same devnet service",
      "",
      `EVM devnet, weather service ($0.01), ${rounds} payments each, alternating, sequential; ledger on embedded PGlite (in memory).`,
      "",
      "| path | p50 ms | p99 ms |",
      "|---|---|---|",
      `| \`@x402/fetch\` direct | ${f(d50)} | ${f(pct(directTimes, 99))} |`,
      `| pipeline (probe, admit, sign, reserve + intent, submit, settle + record) | ${f(p50)} | ${f(pct(pipelineTimes, 99))} |`,
      "",
      `- pipeline / direct at p50: ${(p50 / d50).toFixed(2)} (target <= 1.10)`,
      "",
      "### One chat turn with a payment (offline model, over HTTP)",
      "",
      `| turns | p50 ms | p99 ms |`,
      "|---|---|---|",
      `| ${turnTimes.length} | ${f(pct(turnTimes, 50))} | ${f(pct(turnTimes, 99))} |`,
      "",
      "- target: p50 under 500 ms locally (the seed quotes 5-10 s end to end for most requests)",
    ];
  } finally {
    await devnet.stop();
  }
}
