import { createKeyPairSignerFromBytes } from "@solana/kit";
import { describe, expect, it } from "vitest";
import { solanaKeypair } from "./keys.js";
import { loadLiteSvm } from "./node.js";

describe("loading the Solana node", () => {
  it("reports why Solana is unavailable instead of throwing", () => {
    expect(loadLiteSvm("litesvm-not-a-platform")).toEqual({
      reason: expect.stringMatching(/^cannot load litesvm-not-a-platform/),
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
