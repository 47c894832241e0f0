/**
 * docs/deploy.md#serverless: the serverless fetch handler (src/serverless.ts), imported as a platform
 * imports it and driven with plain `Request` objects.
 *
 * - Against a devnet: configured from an environment (PAYMENTS=external pointed at the devnet, the
 *   ledger on PostgreSQL when DATABASE_URL is set, else PGlite in memory) with a short function
 *   deadline; the paid call's settlement hangs after the chain moved, so the payment is recorded
 *   unknown, then settled from the chain. Once the function's work is over (its body read and what
 *   it handed to `waitUntil` settled, or, with no `waitUntil`, its body closed) the ledger row is
 *   final and matches the transfer on chain.
 * - Around an app whose payment hangs until the test lets it settle: the deadline ends the stream
 *   first, and the function's work is over only once the payment has recorded its outcome.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type ToolSet, tool } from "ai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ToolProvider } from "../src/agent/index.js";
import { type Devnet, startDevnet } from "../src/devnet/index.js";
import { silentLogger } from "../src/log/index.js";
import type { PaymentUpdate } from "../src/protocol/index.js";
import handler, { createFetchHandler, type FetchHandler, serverlessConfig } from "../src/serverless.js";
import { createService } from "../src/service.js";
import { payInputSchema, TOOL_NAMES } from "../src/tools/contract.js";
import { readEvents, singleModelRegistry } from "./helpers.js";
import { evmBalances, readChat, uniqueSchema } from "./payments/harness.js";
import { scriptedModel } from "./scripted.js";
import { evmAddressOf, usdcTransfersOf } from "./transfers.js";

let devnet: Devnet;
let dir: string;
let fn: FetchHandler;
const token = `srv-${randomBytes(12).toString("hex")}`;
const schema = process.env.DATABASE_URL ? uniqueSchema("srv") : undefined;

function environment(m: Devnet["manifest"], signers: string): Record<string, string> {
  const origins = [m.facilitatorUrl, ...m.services.map((s) => s.url)].map((u) => new URL(u).origin);
  return {
    PAYMENTS: "external",
    MODEL_PROVIDER: "offline",
    RPC_URLS: `${m.evm.network}=${m.evm.rpcUrl}`,
    ASSETS: `${m.evm.network}=${m.evm.usdc}`,
    DISCOVERY_URLS: m.discoveryUrl,
    ALLOW_PRIVATE_ORIGINS: [...new Set(origins)].join(","),
    SIGNERS_FILE: signers,
    RATE_LIMIT_POINTS: "1000",
    RATE_LIMIT_ANONYMOUS_POINTS: "1000",
    // An 8 s function: the chat deadline becomes 7 s; a payment starts with 3 s left at least.
    FUNCTION_DEADLINE_MS: "8000",
    MIN_TIME_LEFT_MS: "3000",
    SERVICE_TIMEOUT_MS: "2500",
    RECONCILE_INTERVAL_MS: "3600000",
    ...(process.env.DATABASE_URL && schema
      ? { DATABASE_URL: process.env.DATABASE_URL, DATABASE_SCHEMA: schema }
      : { DATA_DIR: "memory://" }),
    ...(process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL } : {}),
  };
}

beforeAll(async () => {
  devnet = await startDevnet({ manifestPath: null, solana: false });
  const m = devnet.manifest;
  const payer = m.evm.wallets.find((w) => w.role === "payer");
  const key = payer ? devnet.secrets.evm[payer.name] : undefined;
  if (!key) throw new Error("no payer key");
  dir = await mkdtemp(join(tmpdir(), "serverless-"));
  const signers = join(dir, "signers.json");
  await writeFile(signers, JSON.stringify([{ chain: "evm", privateKey: key, tokens: [token] }]), {
    mode: 0o600,
  });
  fn = createFetchHandler({ env: environment(m, signers), logger: silentLogger });
  // The cold start (store, discovery, chains) is not part of the turns below.
  expect((await fn.fetch(new Request("https://fn.example/readyz"))).status).toBe(200);
});

afterAll(async () => {
  await fn?.close();
  await devnet?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
  if (schema && process.env.DATABASE_URL) {
    const { default: postgres } = await import("postgres");
    const sql = postgres(process.env.DATABASE_URL, { max: 1, onnotice: () => {} });
    await sql.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await sql.end();
  }
});

const payerAddress = () => devnet.manifest.evm.wallets.find((w) => w.role === "payer")?.address ?? "";

function paidTurn(): Request {
  return new Request("https://fn.example/api/chat", {
    method: "POST",
    headers: { "Content-Type": "application/json", Authorization: `Bearer ${token}` },
    body: JSON.stringify({
      messages: [{ role: "user", content: "What's the weather in Paris?" }],
      walletAddress: payerAddress(),
    }),
  });
}

/** The payment as GET /api/payments/:id shows it, through the same handler. */
async function paymentOf(id: string) {
  const res = await fn.fetch(
    new Request(`https://fn.example/api/payments/${id}`, { headers: { Authorization: `Bearer ${token}` } }),
  );
  expect(res.status).toBe(200);
  return (await res.json()) as { status: string; transaction?: string; amount: { atomic: string } };
}

async function expectFinalAndOnChain(paymentId: string, payerDecrease: bigint): Promise<void> {
  const row = await paymentOf(paymentId);
  expect(row.status).toBe("settled");
  expect(row.transaction).toMatch(/^0x[0-9a-f]{64}$/);
  expect(payerDecrease).toBe(BigInt(row.amount.atomic));
  expect(await usdcTransfersOf(devnet, row.transaction ?? "")).toEqual([
    {
      from: evmAddressOf(devnet, "payer"),
      to: evmAddressOf(devnet, "merchant"),
      value: BigInt(row.amount.atomic),
    },
  ]);
}

describe("the serverless fetch handler", () => {
  it("fits the chat deadline inside the function's and refuses what a function cannot host", () => {
    const env = { PAYMENTS: "off", FUNCTION_DEADLINE_MS: "10000", MIN_TIME_LEFT_MS: "5000" };
    expect(serverlessConfig(env).requestTimeoutMs).toBe(9000);
    expect(serverlessConfig({ ...env, REQUEST_TIMEOUT_MS: "7000" }).requestTimeoutMs).toBe(7000);
    expect(() => serverlessConfig({ PAYMENTS: "devnet" })).toThrow(/PAYMENTS/);
    // Set to nothing, it is the default, devnet, as loadConfig reads it (found by a review).
    expect(() => serverlessConfig({ PAYMENTS: "", DATA_DIR: "memory://" })).toThrow(/PAYMENTS/);
    expect(() => serverlessConfig({ PAYMENTS: "external", DATABASE_URL: " " })).toThrow(/DATABASE_URL/);
    expect(() => serverlessConfig({ PAYMENTS: "external" })).toThrow(/DATABASE_URL/);
    expect(() => serverlessConfig({ ...env, FUNCTION_DEADLINE_MS: "soon" })).toThrow(/FUNCTION_DEADLINE_MS/);
    // A deadline that leaves no room for a payment is refused by the configuration's own rule.
    const paying = {
      PAYMENTS: "external",
      DATA_DIR: "memory://",
      MIN_TIME_LEFT_MS: "5000",
      SERVICE_TIMEOUT_MS: "4000",
    };
    expect(() => serverlessConfig({ ...paying, FUNCTION_DEADLINE_MS: "5500" })).toThrow(/MIN_TIME_LEFT_MS/);
    expect(serverlessConfig({ ...paying, FUNCTION_DEADLINE_MS: "6500" }).requestTimeoutMs).toBe(5500);
  });

  it("exports a default { fetch } handler, as Vercel and Cloudflare-style hosts import it", () => {
    expect(typeof handler.fetch).toBe("function");
  });

  it("answers 500 problem+json (no crash) when the function's configuration cannot be used", async () => {
    // test/serverless-start.test.ts: the reason, and 503 not_ready for a start that may pass.
    const broken = createFetchHandler({ env: { PAYMENTS: "devnet" }, logger: silentLogger });
    const res = await broken.fetch(new Request("https://fn.example/api/chat", { method: "POST" }));
    expect(res.status).toBe(500);
    expect(res.headers.get("content-type")).toBe("application/problem+json");
    expect((await res.json()).code).toBe("misconfigured");
  });

  it("with waitUntil: a paid turn whose settlement hangs is final in the ledger and on chain once the function's work is over", async () => {
    devnet.faults.set({ settleHangAfterChain: true });
    try {
      const before = await evmBalances(devnet);
      const handed: Promise<unknown>[] = [];
      const response = await fn.fetch(paidTurn(), {
        waitUntil: (work: Promise<unknown>) => handed.push(work),
      });
      expect(handed).toHaveLength(1);
      const result = await readChat(response);
      await Promise.all(handed);
      const paymentId = result.payments[0]?.paymentId ?? "";
      expect(paymentId, result.raw).toMatch(/^pay_/);
      expect(new Set(result.payments.map((p) => p.paymentId))).toEqual(new Set([paymentId]));
      const after = await evmBalances(devnet);
      await expectFinalAndOnChain(paymentId, before.payer - after.payer);
    } finally {
      devnet.faults.reset();
    }
  });

  it("without waitUntil: the body closes only once the payment's writes are done", async () => {
    devnet.faults.set({ settleHangAfterChain: true });
    try {
      const before = await evmBalances(devnet);
      const result = await readChat(await fn.fetch(paidTurn()));
      const paymentId = result.payments[0]?.paymentId ?? "";
      expect(paymentId, result.raw).toMatch(/^pay_/);
      const after = await evmBalances(devnet);
      await expectFinalAndOnChain(paymentId, before.payer - after.payer);
    } finally {
      devnet.faults.reset();
    }
  });
});

/**
 * The same handler around an app whose payment tool hangs after `submitted` until the test lets it
 * settle (as test/deadline.test.ts): the 300 ms chat deadline (a 1.3 s function) ends the stream
 * first, and the function's work is over only once the payment has recorded its outcome.
 */
describe("the serverless handler at the deadline", () => {
  function hangingPayment() {
    let settle!: () => void;
    const settlement = new Promise<void>((resolve) => {
      settle = resolve;
    });
    const ledger: string[] = [];
    const tools: ToolProvider = (ctx): ToolSet => ({
      [TOOL_NAMES.pay]: tool({
        inputSchema: payInputSchema,
        execute: async (input) => {
          const base: PaymentUpdate = {
            paymentId: "pay_slow",
            status: "submitted",
            service: { url: input.url },
            amount: { atomic: "10000", usd: "0.01" },
            network: "eip155:31337",
          };
          ctx.emitPayment(base);
          ledger.push("submitted");
          await settlement;
          ledger.push("settled");
          return { status: "paid", paymentId: "pay_slow", transaction: "0xabc" };
        },
      }),
    });
    return { tools, settle, ledger };
  }

  function slowFunction() {
    const slow = hangingPayment();
    const payCall = {
      toolName: TOOL_NAMES.pay,
      input: { url: "https://api.example.com/weather", maxUsd: "0.01" },
    };
    const fn = createFetchHandler({
      env: {
        PAYMENTS: "off",
        FUNCTION_DEADLINE_MS: "1300",
        RATE_LIMIT_POINTS: "1000",
        RATE_LIMIT_ANONYMOUS_POINTS: "1000",
      },
      logger: silentLogger,
      start: async (config, logger) => ({
        service: createService(config, logger, {
          models: singleModelRegistry(scriptedModel([[payCall]])),
          tools: slow.tools,
        }),
      }),
    });
    const request = () =>
      new Request("https://fn.example/api/chat", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({
          messages: [{ role: "user", content: "weather in Paris" }],
          walletAddress: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
        }),
      });
    return { slow, fn, request };
  }

  const tick = () => new Promise((resolve) => setImmediate(resolve));

  it("hands waitUntil the payment's unfinished writes: the stream ends (e:, d:) first, the work after", async () => {
    const { slow, fn, request } = slowFunction();
    const handed: Promise<unknown>[] = [];
    const response = await fn.fetch(request(), { waitUntil: (work: Promise<unknown>) => handed.push(work) });
    const events = await readEvents(response);
    expect(events.map((e) => e.type).slice(-2)).toEqual(["error", "finish"]);
    expect(events.at(-2)).toMatchObject({ error: { code: "deadline_exceeded", timeoutMs: 300 } });
    expect(handed).toHaveLength(1);
    let over = false;
    void handed[0]?.then(() => {
      over = true;
    });
    await tick();
    expect(over).toBe(false);
    expect(slow.ledger).toEqual(["submitted"]);
    slow.settle();
    await handed[0];
    expect(slow.ledger).toEqual(["submitted", "settled"]);
    await fn.close();
  });

  it("without waitUntil, sends d: and closes the body only after the payment's writes", async () => {
    const { slow, fn, request } = slowFunction();
    const response = await fn.fetch(request());
    const reader = response.body?.pipeThrough(new TextDecoderStream()).getReader();
    if (!reader) throw new Error("no body");
    let text = "";
    while (!/^d:/m.test(text)) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`closed before d:: ${text}`);
      text += value;
    }
    let closed = false;
    const rest = reader.read().then((r) => {
      closed = r.done;
      return r;
    });
    await tick();
    expect(closed).toBe(false);
    expect(slow.ledger).toEqual(["submitted"]);
    slow.settle();
    expect((await rest).done).toBe(true);
    expect(slow.ledger).toEqual(["submitted", "settled"]);
    await fn.close();
  });
});
