import { createKeyPairSignerFromBytes } from "@solana/kit";
import { describe, expect, it } from "vitest";
import { solanaKeypair } from "./keys.js";
import { loadSurfpool, startSolanaNode } from "./node.js";

describe("Surfpool loading", () => {
  it("reports why Solana is unavailable instead of throwing", () => {
    const result = loadSurfpool("@solana/surfpool-not-a-platform");
    expect(result).toEqual({
      reason: expect.stringMatching(/^cannot load @solana\/surfpool-not-a-platform/),
    });
  });
});

describe("Solana devnet keys", () => {
  it("are deterministic 64-byte secret keys whose public half is the address", async () => {
    const a = await solanaKeypair("payer");
    const b = await solanaKeypair("payer");
    expect(a).toEqual(b);
    expect(a.secretKey).toHaveLength(64);
    expect((await createKeyPairSignerFromBytes(a.secretKey)).address).toBe(a.address);
    expect((await solanaKeypair("merchant")).address).not.toBe(a.address);
  });
});

describe("the Solana node's clock", () => {
  it("moves: a later finalized block carries a later time (with Surfpool's defaults every block kept its start time)", async (ctx) => {
    const loaded = loadSurfpool();
    if ("reason" in loaded) return ctx.skip();
    const node = await startSolanaNode(loaded.Surfnet);
    const call = async <T>(method: string, params: unknown[]): Promise<T> => {
      const response = await fetch(node.rpcUrl, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
      });
      return ((await response.json()) as { result: T }).result;
    };
    const finalizedTime = async () => {
      const slot = await call<number>("getSlot", [{ commitment: "finalized" }]);
      return { slot, time: await call<number | null>("getBlockTime", [slot]) };
    };
    try {
      let first = await finalizedTime();
      while (first.time === null) first = await finalizedTime();
      // Waits on the chain, not on a clock: slots come on their own; a second's worth of them
      // (12 or more) must carry a later time.
      let later = first;
      while (later.slot < first.slot + 25) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        later = await finalizedTime();
      }
      expect(later.time).toBeGreaterThan(first.time as number);
    } finally {
      await node.stop();
    }
  }, 30_000);
});
