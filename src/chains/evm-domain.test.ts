import { describe, expect, it } from "vitest";
import { cachedDomains, type TokenDomain, tokenDomainChecked } from "./evm-domain.js";
import type { SchemeClient } from "./types.js";

const USDC: TokenDomain = { name: "USDC", version: "2" };
const ASSET = "0x5FbDB2315678afecb367f032d93F642f64180aa3";

describe("the token's domain, read from chain", () => {
  it("is read once per token (any hex case) for ten minutes, then again", async () => {
    let now = 0;
    let reads = 0;
    const domainOf = cachedDomains(
      async () => {
        reads += 1;
        return USDC;
      },
      () => now,
    );
    await domainOf(ASSET);
    await domainOf(ASSET.toLowerCase());
    expect(reads).toBe(1);
    now += 10 * 60_000;
    await domainOf(ASSET);
    expect(reads).toBe(2);
  });

  it("a failed read is not remembered: the next payment reads again", async () => {
    let reads = 0;
    const domainOf = cachedDomains(async () => {
      reads += 1;
      if (reads === 1) throw new Error("rpc down");
      return USDC;
    });
    await expect(domainOf(ASSET)).rejects.toThrow("rpc down");
    await expect(domainOf(ASSET)).resolves.toEqual(USDC);
  });
});

describe("a scheme that signs only over the token's own domain", () => {
  const signed: string[] = [];
  const inner: SchemeClient = {
    scheme: "exact",
    async createPaymentPayload(version, requirements) {
      signed.push(String(requirements.extra?.name));
      return { x402Version: version, payload: {} };
    },
  };
  const checked = tokenDomainChecked(inner, async () => USDC);
  const offer = (extra: Record<string, unknown>) => ({
    scheme: "exact",
    network: "eip155:31337" as const,
    asset: ASSET,
    amount: "10000",
    payTo: "0x15d34AAf54267DB7D7c367839AAf71A00a2C6A65",
    maxTimeoutSeconds: 60,
    extra,
  });

  it("signs an offer naming the token's name and version", async () => {
    await checked.createPaymentPayload(2, offer({ name: "USDC", version: "2" }));
    expect(signed).toEqual(["USDC"]);
  });

  it.each([
    ["another name", { name: "USD Coin", version: "2" }],
    ["another version", { name: "USDC", version: "1" }],
    ["no domain at all", {}],
    ["a name that is no string", { name: ["USDC"], version: "2" }],
  ])("refuses %s before the signer is asked", async (_what, extra) => {
    signed.length = 0;
    await expect(checked.createPaymentPayload(2, offer(extra))).rejects.toThrow(/EIP-712 domain/);
    expect(signed).toEqual([]);
  });
});
