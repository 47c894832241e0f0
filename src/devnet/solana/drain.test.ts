import { decodePaymentResponseHeader } from "@x402/core/http";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { type Devnet, startDevnet } from "../index.js";
import { solanaPayingFetch, solanaUsdcBalance, walletAddress } from "../testing/index.js";
import { loadSurfpool, startSolanaNode } from "./node.js";

/** A stand-in for Surfpool's native class that counts drains (and can fail them). */
function fakeSurfnet(drain: () => unknown[]) {
  const calls = { drain: 0, stop: 0 };
  const native = {
    rpcUrl: "http://127.0.0.1:1",
    wsUrl: "ws://127.0.0.1:2",
    fundSolMany() {},
    setTokenBalance() {},
    setAccount() {},
    drainEvents() {
      calls.drain++;
      return drain();
    },
    stop() {
      calls.stop++;
    },
  };
  return { Surfnet: { start: () => native, startWithConfig: () => native }, calls };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("the Solana node's event drain", () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it("drains for the node's whole lifetime on an unref'd timer, and stops with the node", async () => {
    const intervals = vi.spyOn(globalThis, "setInterval");
    const { Surfnet, calls } = fakeSurfnet(() => [{ kind: "systemClockUpdated" }]);
    const node = await startSolanaNode(Surfnet, { drainIntervalMs: 20 });
    const timer = intervals.mock.results.at(-1)?.value as NodeJS.Timeout;
    expect(timer.hasRef()).toBe(false);
    await sleep(250);
    expect(calls.drain).toBeGreaterThanOrEqual(4);
    await node.stop();
    const afterStop = calls.drain;
    await sleep(100);
    expect(calls.drain).toBe(afterStop);
    expect(calls.stop).toBe(1);
  });

  it("never lets a failing drain escape the timer", async () => {
    const { Surfnet, calls } = fakeSurfnet(() => {
      throw new Error("native drain failed");
    });
    const uncaught = vi.fn();
    process.on("uncaughtException", uncaught);
    try {
      const node = await startSolanaNode(Surfnet, { drainIntervalMs: 10 });
      await sleep(120);
      await node.stop();
    } finally {
      process.off("uncaughtException", uncaught);
    }
    expect(calls.drain).toBeGreaterThanOrEqual(3);
    expect(uncaught).not.toHaveBeenCalled();
  });
});

const surfpool = loadSurfpool();
const SLOTS = 1_200;

/** One JSON-RPC call with a deadline: a stalled Surfpool accepts the request but never answers. */
async function rpc<T>(url: string, method: string, params: unknown[] = []): Promise<T> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
    signal: AbortSignal.timeout(3_000),
  });
  const body = (await response.json()) as { result?: T; error?: unknown };
  if (body.result === undefined) throw new Error(`${method}: ${JSON.stringify(body.error)}`);
  return body.result;
}

describe.skipIf("reason" in surfpool)(`Surfpool after ${SLOTS} slots`, () => {
  let devnet: Devnet;
  let rpcUrl: string;

  beforeAll(async () => {
    // 10 ms slots: past Surfpool's ~1,000 undrained events in about 10 s instead of 80 s.
    devnet = await startDevnet({
      manifestPath: null,
      solana: true,
      solanaNode: { slotTimeMs: 10, engine: "surfpool" },
    });
    rpcUrl = devnet.manifest.solana?.rpcUrl ?? "";
  });
  afterAll(async () => {
    await devnet?.stop();
  });

  it("still produces blocks and answers RPC", async () => {
    const deadline = Date.now() + 60_000;
    let slot = 0;
    while (slot < SLOTS) {
      if (Date.now() > deadline) throw new Error(`stuck at slot ${slot}`);
      await sleep(500);
      slot = await rpc<number>(rpcUrl, "getSlot");
    }
    const payer = walletAddress(devnet, "solana", "payer");
    const latest = await rpc<{ value: { blockhash: string } }>(rpcUrl, "getLatestBlockhash");
    expect(latest.value.blockhash).toMatch(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/);
    expect(await rpc<number>(rpcUrl, "getSlot")).toBeGreaterThanOrEqual(SLOTS);
    expect((await rpc<{ value: number }>(rpcUrl, "getBalance", [payer])).value).toBeGreaterThan(0);
  }, 70_000);

  it("still settles an x402 payment", async () => {
    expect(await rpc<number>(rpcUrl, "getSlot")).toBeGreaterThanOrEqual(SLOTS);
    const pay = await solanaPayingFetch(devnet, "payer");
    const payer = walletAddress(devnet, "solana", "payer");
    const before = await solanaUsdcBalance(devnet, payer);
    const weather = devnet.manifest.services.find((s) => s.id === "weather");
    if (!weather) throw new Error("no weather service");
    const response = await pay(`${weather.url}?city=Oslo`, { signal: AbortSignal.timeout(15_000) });
    expect(response.status).toBe(200);
    const receipt = decodePaymentResponseHeader(response.headers.get("payment-response") ?? "");
    expect(receipt).toMatchObject({ success: true, network: devnet.manifest.solana?.network });
    expect(receipt.transaction).toMatch(/^[1-9A-HJ-NP-Za-km-z]{64,88}$/);
    expect(await solanaUsdcBalance(devnet, payer)).toBe(before - BigInt(weather.priceAtomic));
  }, 30_000);
});
