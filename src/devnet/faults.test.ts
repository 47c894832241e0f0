import { decodePaymentRequiredHeader } from "@x402/core/http";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type Devnet, startDevnet } from "./index.js";
import { evmPayingFetch, evmUsdcBalance, walletAddress } from "./testing/index.js";

let devnet: Devnet;
let weatherUrl: string;
let newsUrl: string;

beforeAll(async () => {
  // EVM is enough to prove the switches; they act on the facilitator and services, not a chain.
  devnet = await startDevnet({ manifestPath: null, solana: false });
  weatherUrl = `${devnet.manifest.services.find((s) => s.id === "weather")!.url}?city=Oslo`;
  newsUrl = `${devnet.manifest.services.find((s) => s.id === "news")!.url}?topic=rust`;
});

afterEach(() => devnet.faults.reset());
afterAll(async () => {
  await devnet?.stop();
});

const activity = async () =>
  (
    await fetch(new URL("/__devnet/activity", devnet.manifest.controlUrl), {
      headers: { authorization: `Bearer ${devnet.manifest.devToken}` },
    })
  ).json();

const merchantBalance = () => evmUsdcBalance(devnet, walletAddress(devnet, "evm", "merchant"));

describe("fault switches", () => {
  it("are all off by default", () => {
    expect(devnet.faults.get()).toEqual({
      serviceDown: null,
      facilitatorDown: null,
      settleDelayMs: 0,
      settleFail: false,
      settleHangAfterChain: false,
      settleLate: false,
      requoteMultiplier: null,
    });
  });

  it("serviceDown=refuse makes services refuse connections, and reset reopens them", async () => {
    devnet.faults.set({ serviceDown: "refuse" });
    await expect(fetch(weatherUrl)).rejects.toThrow();
    devnet.faults.reset();
    expect((await fetch(weatherUrl)).status).toBe(402);
  });

  it("serviceDown=503 answers 503, and a list of ids takes down only those", async () => {
    devnet.faults.set({ serviceDown: "503" });
    expect((await fetch(weatherUrl)).status).toBe(503);
    expect((await fetch(newsUrl)).status).toBe(503);
    devnet.faults.set({ serviceDown: ["weather"] });
    expect((await fetch(weatherUrl)).status).toBe(503);
    expect((await fetch(newsUrl)).status).toBe(402);
  });

  it("facilitatorDown=refuse closes the facilitator; a paid call fails without moving money", async () => {
    const before = await merchantBalance();
    devnet.faults.set({ facilitatorDown: "refuse" });
    await expect(fetch(`${devnet.manifest.facilitatorUrl}/supported`)).rejects.toThrow();
    // @x402/hono turns a facilitator it cannot reach into a 402 carrying the transport error.
    const response = await evmPayingFetch(devnet)(weatherUrl);
    expect(response.status).toBe(402);
    expect(decodePaymentRequiredHeader(response.headers.get("payment-required") ?? "").error).toBe(
      "fetch failed",
    );
    expect(await merchantBalance()).toBe(before);
    devnet.faults.reset();
    expect((await fetch(`${devnet.manifest.facilitatorUrl}/supported`)).status).toBe(200);
  });

  it("facilitatorDown=503 answers 503; a paid call fails without moving money", async () => {
    const before = await merchantBalance();
    devnet.faults.set({ facilitatorDown: "503" });
    expect((await fetch(`${devnet.manifest.facilitatorUrl}/supported`)).status).toBe(503);
    const response = await evmPayingFetch(devnet)(weatherUrl);
    expect(response.status).toBe(402);
    const { error } = decodePaymentRequiredHeader(response.headers.get("payment-required") ?? "");
    expect(error).toMatch(/Facilitator verify failed \(503\)/);
    expect(await merchantBalance()).toBe(before);
  });

  it("settleDelayMs slows settlement down", async () => {
    devnet.faults.set({ settleDelayMs: 400 });
    const started = Date.now();
    const response = await evmPayingFetch(devnet)(weatherUrl);
    expect(response.status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(400);
  });

  it("settleFail refuses settlement with a reason and sends nothing on chain", async () => {
    const before = await merchantBalance();
    devnet.faults.set({ settleFail: true });
    const response = await evmPayingFetch(devnet)(weatherUrl);
    expect(response.status).toBe(402);
    const paymentResponse = response.headers.get("payment-response");
    const reason = paymentResponse
      ? JSON.parse(Buffer.from(paymentResponse, "base64").toString()).errorReason
      : decodePaymentRequiredHeader(response.headers.get("payment-required") ?? "").error;
    expect(reason).toBe("devnet_settle_fault");
    expect(await merchantBalance()).toBe(before);
  });

  it("settleHangAfterChain settles on chain but never answers until the client gives up", async () => {
    const before = await merchantBalance();
    devnet.faults.set({ settleHangAfterChain: true });
    const pay = evmPayingFetch(devnet);
    await expect(pay(weatherUrl, { signal: AbortSignal.timeout(1_500) })).rejects.toThrow();
    expect(await merchantBalance()).toBe(before + 10_000n);
    // The held settlement is still in flight (what a test file waits out at its end), until reset.
    expect(await activity()).toMatchObject({ verifying: 0, settling: 1 });
    devnet.faults.reset();
    const idle = { verifying: 0, settling: 0, serving: 0 };
    for (let i = 0; i < 100 && JSON.stringify(await activity()) !== JSON.stringify(idle); i++)
      await new Promise((r) => setTimeout(r, 20));
    expect(await activity()).toEqual(idle);
  });

  it("requoteMultiplier re-quotes the paid retry and later requests at the higher price", async () => {
    devnet.faults.set({ requoteMultiplier: 3 });
    const before = await merchantBalance();
    const response = await evmPayingFetch(devnet)(weatherUrl);
    expect(response.status).toBe(402);
    const requote = decodePaymentRequiredHeader(response.headers.get("payment-required") ?? "");
    expect(requote.accepts[0]?.amount).toBe("30000");
    const next = decodePaymentRequiredHeader((await fetch(weatherUrl)).headers.get("payment-required") ?? "");
    expect(next.accepts[0]?.amount).toBe("30000");
    expect(await merchantBalance()).toBe(before);
    devnet.faults.reset();
    const back = decodePaymentRequiredHeader((await fetch(weatherUrl)).headers.get("payment-required") ?? "");
    expect(back.accepts[0]?.amount).toBe("10000");
  });
});

describe("the HTTP control endpoint", () => {
  const control = (init: RequestInit & { token?: string }) =>
    fetch(devnet.manifest.controlUrl, {
      ...init,
      headers: {
        "content-type": "application/json",
        authorization: `Bearer ${init.token ?? devnet.manifest.devToken}`,
      },
    });

  it("requires the dev token", async () => {
    expect((await control({ method: "GET", token: "wrong" })).status).toBe(401);
    expect((await fetch(devnet.manifest.controlUrl)).status).toBe(401);
  });

  it("sets, reads and resets faults", async () => {
    const set = await control({
      method: "POST",
      body: JSON.stringify({ serviceDown: "503", settleDelayMs: 5 }),
    });
    expect(set.status).toBe(200);
    expect(devnet.faults.get()).toMatchObject({ serviceDown: "503", settleDelayMs: 5 });
    expect((await fetch(weatherUrl)).status).toBe(503);
    expect(await (await control({ method: "GET" })).json()).toMatchObject({ serviceDown: "503" });
    expect((await control({ method: "DELETE" })).status).toBe(200);
    expect(devnet.faults.get().serviceDown).toBeNull();
  });

  it("rejects unknown switches and bad values", async () => {
    expect((await control({ method: "POST", body: JSON.stringify({ nope: true }) })).status).toBe(400);
    expect((await control({ method: "POST", body: JSON.stringify({ settleDelayMs: -1 }) })).status).toBe(400);
    expect(devnet.faults.get().settleDelayMs).toBe(0);
  });

  it("funds a fresh wallet from the faucet: gas ETH and the USDC asked for", async () => {
    const address = privateKeyToAccount(generatePrivateKey()).address;
    const response = await fetch(new URL("/__devnet/fund", devnet.manifest.controlUrl), {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${devnet.manifest.devToken}` },
      body: JSON.stringify({ evm: [{ address, usdcAtomic: "123456" }] }),
    });
    expect(await response.json()).toEqual({ funded: 1 });
    expect(await evmUsdcBalance(devnet, address)).toBe(123_456n);
    const rpc = await fetch(devnet.manifest.evm.rpcUrl, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_getBalance", params: [address, "latest"] }),
    });
    expect(BigInt(((await rpc.json()) as { result: string }).result)).toBeGreaterThan(0n);
  });
});
