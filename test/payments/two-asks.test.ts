/**
 * docs/payments.md#spending-limits: two paid asks in one message both happen, each quoted, checked
 * and paid (its own `p:` updates) under the same per-request budget, or the answer says which one
 * was not done and why. Through the built-in offline model and the real pipeline on the devnet.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { walletAddress } from "../../src/devnet/testing/index.js";
import { type Booted, boot, chat, rowsOf, useTestDevnet } from "./harness.js";

const TWO_ASKS = "What's the weather in Paris and the price of BTC?";

const devnet = useTestDevnet();
let booted: Booted;

beforeAll(async () => {
  booted = await boot(devnet, { store: "pglite" });
});
afterAll(async () => {
  await booted?.close();
});

function textOf(result: Awaited<ReturnType<typeof chat>>): string {
  return result.events.flatMap((e) => (e.type === "text" ? [e.text] : [])).join("");
}

describe("two paid asks in one message (offline model, devnet)", () => {
  const wallet = () => walletAddress(devnet, "evm", "payer");
  const token = () => devnet.manifest.devToken;

  it("pays for both, each with its own payment, and answers both", async () => {
    const result = await chat(booted.running, { message: TWO_ASKS, wallet: wallet(), token: token() });
    expect(result.errors).toEqual([]);
    const ids = [...new Set(result.payments.map((p) => p.paymentId))];
    expect(ids).toHaveLength(2);
    for (const id of ids) {
      expect(result.payments.filter((p) => p.paymentId === id).map((p) => p.status)).toEqual([
        "quoted",
        "reserved",
        "signed",
        "submitted",
        "settled",
      ]);
    }
    const settled = result.payments.filter((p) => p.status === "settled");
    expect(settled.map((p) => p.service.url)).toEqual([
      expect.stringContaining("/weather?city=Paris"),
      expect.stringContaining("symbol=BTC"),
    ]);
    expect(result.finish.finishReason).toBe("payment-complete");
    expect(result.finish.transactions).toHaveLength(2);
    const text = textOf(result);
    expect(text).toContain("- city: Paris");
    expect(text).toContain("- symbol: BTC");
    expect(text.match(/Paid \$0\.0[12] on Local EVM devnet; transaction 0x[0-9a-f]{64}\./g)).toHaveLength(2);
    expect((await rowsOf(booted.running, result)).map((r) => r.status).sort()).toEqual([
      "settled",
      "settled",
    ]);
  });

  it("pays the first and refuses the second with limit_exceeded when the per-request limit covers one only", async () => {
    // Weather costs $0.01 and the BTC price $0.02: a $0.02 per-request limit covers either, not both.
    const result = await chat(booted.running, {
      message: TWO_ASKS,
      wallet: wallet(),
      token: token(),
      spendingLimits: { perRequest: "0.02" },
    });
    const ids = [...new Set(result.payments.map((p) => p.paymentId))];
    expect(ids).toHaveLength(1);
    expect(result.payments.at(-1)).toMatchObject({ status: "settled", amount: { usd: "0.01" } });
    expect(result.errors).toEqual([
      expect.objectContaining({ code: "limit_exceeded", limit: "perRequest", remainingUsd: "0.01" }),
    ]);
    expect(result.finish.finishReason).toBe("limit-exceeded");
    expect(result.finish.transactions).toHaveLength(1);
    const text = textOf(result);
    expect(text).toContain("- city: Paris");
    expect(text).toMatch(/I can't pay for Crypto[^:]*: .*\(limit_exceeded\)/);
    expect(text).toContain("I didn't pay anything.");
    const rows = await rowsOf(booted.running, result);
    expect(rows.map((r) => r.status)).toEqual(["settled"]);
  });
});
