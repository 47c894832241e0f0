/**
 * Issue 7 item 9, the payment side: when a step after `p: quoted` throws (the store went away), the
 * payment still gets a final `p:` update, the client an `e:` with a stable code and a finish reason
 * that says the turn failed, and neither the stream nor the model sees the exception's text.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Devnet } from "../../src/devnet/index.js";
import { walletAddress } from "../../src/devnet/testing.js";
import type { Ledger } from "../../src/payments/ledger.js";
import {
  type Booted,
  boot,
  chat,
  evmBalances,
  ledgerOf,
  payCall,
  ScriptedModels,
  startTestDevnet,
} from "./harness.js";

let devnet: Devnet;
let booted: Booted;
const models = new ScriptedModels();
const LEAK = "Failed query: select sum(amount) from payments where wallet = $1 params: 0x7099";

beforeAll(async () => {
  devnet = await startTestDevnet();
  booted = await boot(devnet, { store: "pglite", models: models.registry });
});
afterAll(async () => {
  await booted?.close();
  await devnet?.stop();
});

describe("a step that throws after the quote", () => {
  it.each([
    ["reserve", "reserve"],
    ["recording the signature (nothing sent yet)", "transition"],
  ] as const)("ends the payment with a final p: update when %s throws", async (_what, method) => {
    const ledger = ledgerOf(booted.running) as Ledger & Record<string, unknown>;
    const original = ledger[method];
    const before = await evmBalances(devnet);
    ledger[method] = async () => {
      throw new Error(LEAK);
    };
    try {
      const calls = models.model.doStreamCalls.length;
      const result = await chat(booted.running, {
        wallet: walletAddress(devnet, "evm", "payer"),
        token: devnet.manifest.devToken,
        message: models.script(`throws-${method}`, [[payCall(devnet)]]),
      });
      const statuses = result.payments.map((p) => p.status);
      expect(statuses[0]).toBe("quoted");
      expect(statuses.at(-1)).toBe("failed");
      expect(result.payments.at(-1)?.reason).toMatch(/^[a-z_]+$/);
      expect(result.errors.at(-1)?.code).toMatch(/^(internal|store_unavailable)$/);
      expect(result.finish.finishReason).toBe("error");
      expect(result.raw).not.toContain("Failed query");
      expect(result.raw).not.toContain("params:");
      const prompts = JSON.stringify(models.model.doStreamCalls.slice(calls).map((c) => c.prompt));
      expect(prompts).not.toContain("Failed query");
      expect(await evmBalances(devnet)).toEqual(before);
    } finally {
      ledger[method] = original;
    }
  });
});
