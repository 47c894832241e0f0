/**
 * docs/payments.md#spending-limits and #server-side-requests: a scripted model that obeys every
 * instruction tries to pay what policy forbids (a service origin not allowed, a network not allowed,
 * an amount over a limit, loopback / private / link-local URLs). The signer is never used: no ledger
 * row, no balance change, and a clear `e:` line each time. A higher re-quote is never paid
 * automatically. Keys and the dev token never appear in a stream.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { walletAddress } from "../../src/devnet/testing/index.js";
import {
  type Booted,
  boot,
  type ChatResult,
  chat,
  evmBalances,
  payCall,
  rowsOf,
  type ScriptedCall,
  ScriptedModels,
  secretStrings,
  serviceUrl,
  useTestDevnet,
} from "./harness.js";

const devnet = useTestDevnet();
let booted: Booted;
const models = new ScriptedModels();
/** Every raw stream of this file, searched for secrets at the end. */
const streams: string[] = [];

beforeAll(async () => {
  // Policy refusals never reach the ledger, so one store suffices here.
  booted = await boot(devnet, { store: "pglite", models: models.registry });
});
afterAll(async () => {
  await booted?.close();
});

const payer = () => walletAddress(devnet, "evm", "payer");
const origin = (id: string) => new URL(serviceUrl(devnet, id)).origin;

async function run(
  name: string,
  steps: ScriptedCall[][],
  spendingLimits?: Record<string, unknown>,
): Promise<ChatResult> {
  const result = await chat(booted.running, {
    wallet: payer(),
    token: devnet.manifest.devToken,
    message: models.script(name, steps),
    ...(spendingLimits ? { spendingLimits } : {}),
  });
  streams.push(result.raw);
  return result;
}

/** Nothing was signed: no ledger row for the request, no `signed` update, balances unchanged. */
async function expectUntouched(result: ChatResult, before: Awaited<ReturnType<typeof evmBalances>>) {
  expect(await rowsOf(booted.running, result)).toEqual([]);
  expect(result.payments.map((p) => p.status)).not.toContain("signed");
  expect(result.finish.transactions).toEqual([]);
  expect(await evmBalances(devnet)).toEqual(before);
}

describe("a model that obeys every instruction cannot make the server pay what policy forbids", () => {
  it("refuses a service origin outside allowedServices", async () => {
    const before = await evmBalances(devnet);
    const result = await run("other-origin", [[payCall(devnet, "news")]], {
      allowedServices: [origin("weather")],
    });
    expect(result.finish.finishReason).toBe("limit-exceeded");
    expect(result.errors).toEqual([
      expect.objectContaining({ code: "limit_exceeded", limit: "allowedServices" }),
    ]);
    expect(result.errors[0]?.message).toContain(origin("news"));
    await expectUntouched(result, before);
  });

  it.each([
    ["only Solana allowed, EVM wallet", ["solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1"]],
    ["a network the server does not allow", ["eip155:8453"]],
  ])("refuses a network not allowed (%s)", async (_what, allowedNetworks) => {
    const before = await evmBalances(devnet);
    const result = await run("network", [[payCall(devnet)]], { allowedNetworks });
    expect(result.finish.finishReason).toBe("limit-exceeded");
    expect(result.errors.at(-1)).toMatchObject({ code: "limit_exceeded", limit: "allowedNetworks" });
    await expectUntouched(result, before);
  });

  it.each([
    ["perTransaction", { perTransaction: "0.009" }],
    ["perRequest", { perRequest: "0.009" }],
    ["daily", { daily: "0.009" }],
  ])("refuses an amount over the %s limit", async (limit, spendingLimits) => {
    const before = await evmBalances(devnet);
    const result = await run(`over-${limit}`, [[payCall(devnet)]], spendingLimits);
    expect(result.finish.finishReason).toBe("limit-exceeded");
    expect(result.payments.map((p) => p.status)).toEqual(["quoted", "refused"]);
    expect(result.errors.at(-1)).toMatchObject({
      code: "limit_exceeded",
      limit,
      limitUsd: "0.009",
      priceUsd: "0.01",
    });
    await expectUntouched(result, before);
  });

  it("refuses the second payment of a request once perRequest is used up", async () => {
    const before = await evmBalances(devnet);
    const result = await run("two-services", [[payCall(devnet)], [payCall(devnet, "news")]], {
      perRequest: "0.012",
    });
    expect(result.finish.finishReason).toBe("limit-exceeded");
    expect(result.errors.at(-1)).toMatchObject({
      code: "limit_exceeded",
      limit: "perRequest",
      remainingUsd: "0.002",
      priceUsd: "0.005",
    });
    const rows = await rowsOf(booted.running, result);
    expect(rows.map((r) => r.status)).toEqual(["settled"]);
    const after = await evmBalances(devnet);
    expect(before.payer - after.payer).toBe(10_000n);
  });

  it.each([
    ["loopback, not a devnet service", "http://127.0.0.1:9/", /^127\.0\.0\.1:9 is a loopback address/],
    [
      "link-local metadata",
      "http://169.254.169.254/latest/meta-data/",
      /^169\.254\.169\.254 is a link-local/,
    ],
    ["private network", "http://10.0.0.1/pay", /^10\.0\.0\.1 is a private address/],
    ["IPv6 loopback", "http://[::1]:9/", /^\[::1\]:9 is a loopback address/],
    ["not http", "file:///etc/passwd", /^Only http and https URLs are allowed, not file:/],
    // A model's mistakes, not attacks: a clear refusal it can correct, never an internal error.
    ["a relative URL", "/weather", /not an absolute http\(s\) URL/],
    ["a URL with two ports", "http://127.0.0.1:3181:80/x", /not an absolute http\(s\) URL/],
  ])("refuses a server-side request to %s (SSRF)", async (_what, url, said) => {
    const before = await evmBalances(devnet);
    const result = await run(`ssrf-${url}`, [
      [{ toolName: "get_quote", input: { url } }],
      [{ toolName: "pay_and_fetch", input: { url, maxUsd: "0.01" } }],
    ]);
    expect(result.finish.finishReason).not.toBe("payment-complete");
    expect(result.errors.length).toBeGreaterThan(0);
    for (const e of result.errors) {
      expect(e.code).toBe("payment_unavailable");
      expect(e.message).toMatch(said);
    }
    expect(result.payments).toEqual([]);
    await expectUntouched(result, before);
  });
});

describe("a re-quote above the checked price", () => {
  it("is refused as price_changed when the model passes the quoted price (offline model)", async () => {
    const before = await evmBalances(devnet);
    await devnet.faults.set({ requoteMultiplier: 50 });
    const result = await chat(booted.running, { wallet: payer(), token: devnet.manifest.devToken });
    streams.push(result.raw);
    expect(result.payments.map((p) => p.status)).toEqual(["quoted", "refused"]);
    expect(result.payments[0]?.amount?.usd).toBe("0.50");
    expect(result.errors.at(-1)).toMatchObject({
      code: "price_changed",
      quotedUsd: "0.01",
      priceUsd: "0.50",
    });
    expect(result.finish.finishReason).toBe("payment-failed");
    await expectUntouched(result, before);
  });

  // Found by a black-box run: the refusal was kept for the turn, so the corrected call got it again.
  it("a call refused for its maxUsd runs afresh with a corrected maxUsd in the same turn: paid once", async () => {
    const before = await evmBalances(devnet);
    const result = await run("maxusd-corrected", [
      [payCall(devnet, "weather", { maxUsd: "0.001" })],
      [payCall(devnet, "weather", { maxUsd: "0.01" })],
      [payCall(devnet, "weather", { maxUsd: "0.01" })],
    ]);
    expect(result.errors[0]).toMatchObject({ code: "price_changed", quotedUsd: "0.001", priceUsd: "0.01" });
    // The ask was paid in the end: the turn says so, not payment-failed (a user told so pays again).
    expect(result.finish.finishReason).toBe("payment-complete");
    const rows = await rowsOf(booted.running, result);
    expect(rows.map((r) => r.status)).toEqual(["settled"]);
    expect(result.finish.transactions).toHaveLength(1);
    expect(before.payer - (await evmBalances(devnet)).payer).toBe(10_000n);
  });

  it("is never paid when the service asks more after a signed payment: one signature, no second payment", async () => {
    const before = await evmBalances(devnet);
    await devnet.faults.set({ requoteMultiplier: 50 });
    const result = await run("requote-after-sign", [[payCall(devnet)]]);
    expect(result.payments.filter((p) => p.status === "signed")).toHaveLength(1);
    expect(new Set(result.payments.map((p) => p.paymentId)).size).toBe(1);
    expect(result.payments.map((p) => p.amount?.usd)).not.toContain("0.50");
    const rows = await rowsOf(booted.running, result);
    expect(rows).toHaveLength(1);
    expect(rows[0]?.amount).toBe(10_000n);
    // Sent: unclear (never called failed) until the chain says no money moved.
    const [code, finish] =
      rows[0]?.status === "unknown"
        ? ["payment_unclear", "payment-unclear"]
        : ["payment_failed", "payment-failed"];
    expect(rows[0]?.status === "unknown" || rows[0]?.status === "failed").toBe(true);
    expect(result.errors.at(-1)?.code).toBe(code);
    expect(result.finish.finishReason).toBe(finish);
    expect(await evmBalances(devnet)).toEqual(before);
  });
});

it("never puts a key or the dev token in a stream", () => {
  expect(streams.length).toBeGreaterThan(10);
  const secrets = secretStrings(devnet);
  expect(secrets.length).toBeGreaterThan(5);
  for (const raw of streams) for (const secret of secrets) expect(raw).not.toContain(secret);
});
