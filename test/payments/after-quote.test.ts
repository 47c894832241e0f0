/**
 * docs/protocol.md#p-payment-update, the payment side: when a step after `p: quoted` throws (the store went
 * away), the payment still gets a final `p:` update, the client an `e:` with a stable code and a finish
 * reason that says the turn failed, and neither the stream nor the model sees the exception's text.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { walletAddress } from "../../src/devnet/testing/index.js";
import {
  type Booted,
  boot,
  chat,
  evmBalances,
  ledgerOf,
  payCall,
  rowsOf,
  ScriptedModels,
  useTestDevnet,
} from "./harness.js";

const devnet = useTestDevnet();
let booted: Booted;
const models = new ScriptedModels();
const LEAK = "Failed query: select sum(amount) from payments where wallet = $1 params: 0x7099";

beforeAll(async () => {
  booted = await boot(devnet, { store: "pglite", models: models.registry });
});
afterAll(async () => {
  await booted?.close();
});

describe("a step that throws after the quote", () => {
  it("ends the payment as failed, nothing sent, when the reservation throws", async () => {
    const before = await evmBalances(devnet);
    const calls = models.model.doStreamCalls.length;
    const result = await withLedgerFault("reserve", () => run("throws-reserve"));
    expect(result.payments.map((p) => p.status)).toEqual(["quoted", "failed"]);
    expect(result.payments.at(-1)?.reason).toMatch(/^(internal|store_unavailable)$/);
    expect(result.errors.at(-1)?.code).toMatch(/^(internal|store_unavailable)$/);
    expect(result.finish.finishReason).toBe("error");
    expectNoLeak(result.raw, calls);
    expect(await evmBalances(devnet)).toEqual(before);
  });

  it("delivers the answer and says unknown when the settlement cannot be recorded; the reconciler records it later", async () => {
    const calls = models.model.doStreamCalls.length;
    const result = await withLedgerFault("transition", () => run("throws-transition"));
    const last = result.payments.at(-1);
    expect(result.payments.map((p) => p.status)).toEqual([
      "quoted",
      "reserved",
      "signed",
      "submitted",
      "unknown",
    ]);
    expect(last?.reason).toBe("outcome_unrecorded");
    expect(last?.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    // Settled but not on record: unclear to the ledger, never called failed.
    expect(result.errors.at(-1)?.code).toBe("payment_unclear");
    expect(result.finish.finishReason).toBe("payment-unclear");
    expectNoLeak(result.raw, calls);
    // The row was born `submitted` with its authorization, so the chain resolves it.
    const payments = booted.running.payments;
    if (!payments) throw new Error("payments are off");
    const [row] = await rowsOf(booted.running, result);
    expect(row?.status).toBe("submitted");
    const resolved = await payments.reconciler.resolve(row?.paymentId ?? "");
    expect(resolved?.status).toBe("settled");
    expect(resolved?.txHash).toBe(last?.transaction);
  });
});

function run(name: string) {
  return chat(booted.running, {
    wallet: walletAddress(devnet, "evm", "payer"),
    token: devnet.manifest.devToken,
    message: models.script(name, [[payCall(devnet)]]),
  });
}

/** Make one ledger method throw a driver-like error (SQL and parameters in its text) while `body` runs. */
async function withLedgerFault<T>(method: "reserve" | "transition", body: () => Promise<T>): Promise<T> {
  const ledger = ledgerOf(booted.running) as unknown as Record<
    string,
    (...args: unknown[]) => Promise<unknown>
  >;
  const original = ledger[method];
  ledger[method] = async () => {
    throw new Error(LEAK);
  };
  try {
    return await body();
  } finally {
    if (original) ledger[method] = original;
  }
}

function expectNoLeak(raw: string, fromCall: number) {
  expect(raw).not.toContain("Failed query");
  expect(raw).not.toContain("params:");
  const prompts = JSON.stringify(models.model.doStreamCalls.slice(fromCall).map((c) => c.prompt));
  expect(prompts).not.toContain("Failed query");
}
