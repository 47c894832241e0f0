import { encodePaymentRequiredHeader } from "@x402/core/http";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { privateKeyToAccount } from "viem/accounts";
import { describe, expect, it } from "vitest";
import { buildTarget } from "./pipeline.js";
import { readPaymentDemand, signOffer } from "./x402.js";

// Hardhat's first published test account: a devnet key, never a real one.
const KEY = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";
const ASSET = "0x5FbDB2315678afecb367f032d93F642f64180aa3";
const PAY_TO = "0x15d34AAf54267DB7D7c367839AAf71A00a2C6A65";

const v2 = {
  x402Version: 2,
  resource: { url: "http://svc/weather" },
  accepts: [
    {
      scheme: "exact",
      network: "eip155:31337",
      amount: "10000",
      asset: ASSET,
      payTo: PAY_TO,
      maxTimeoutSeconds: 60,
      extra: { name: "USD Coin", version: "2" },
    },
  ],
};

const headers = (h: Record<string, string>) => (name: string) => h[name.toUpperCase()] ?? h[name] ?? null;

describe("reading a 402", () => {
  it("reads v2 from the PAYMENT-REQUIRED header", () => {
    const demand = readPaymentDemand(
      headers({ "PAYMENT-REQUIRED": encodePaymentRequiredHeader(v2 as never) }),
      undefined,
    );
    expect(demand?.version).toBe(2);
    expect(demand?.offers).toEqual([
      {
        scheme: "exact",
        network: "eip155:31337",
        amount: "10000",
        asset: ASSET,
        payTo: PAY_TO,
        maxTimeoutSeconds: 60,
        extra: { name: "USD Coin", version: "2" },
      },
    ]);
  });

  it("reads v1 from the JSON body and maps its network names to CAIP-2", () => {
    const body = {
      x402Version: 1,
      error: "X-PAYMENT header is required",
      accepts: [
        {
          scheme: "exact",
          network: "base-sepolia",
          maxAmountRequired: "25000",
          resource: "http://svc/x",
          description: "",
          mimeType: "application/json",
          asset: "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
          payTo: PAY_TO,
          maxTimeoutSeconds: 60,
          extra: { name: "USDC", version: "2" },
        },
      ],
    };
    const demand = readPaymentDemand(headers({}), body);
    expect(demand?.version).toBe(1);
    expect(demand?.offers[0]).toMatchObject({ network: "eip155:84532", amount: "25000" });
  });

  it("returns undefined for a 402 that is not x402", () => {
    expect(readPaymentDemand(headers({}), { error: "pay me" })).toBeUndefined();
    expect(readPaymentDemand(headers({ "PAYMENT-REQUIRED": "not base64 json" }), undefined)).toBeUndefined();
  });
});

describe("signing the chosen offer", () => {
  it("signs exactly the quoted amount and recipient, and keeps only what reconciliation needs", async () => {
    const demand = readPaymentDemand(
      headers({ "PAYMENT-REQUIRED": encodePaymentRequiredHeader(v2 as never) }),
      undefined,
    );
    if (!demand) throw new Error("no demand");
    const scheme = new ExactEvmScheme(privateKeyToAccount(KEY));
    const signed = await signOffer(demand, 0, scheme, { amount: 10000n, payTo: PAY_TO });
    expect(Object.keys(signed.headers)).toEqual(["PAYMENT-SIGNATURE"]);
    expect(signed.authorization).toMatchObject({
      kind: "evm-eip3009",
      from: privateKeyToAccount(KEY).address,
    });
    expect(JSON.stringify(signed.authorization)).not.toMatch(/signature/i);
    await expect(signOffer(demand, 0, scheme, { amount: 9999n, payTo: PAY_TO })).rejects.toThrow(
      /amount differs/,
    );
  });

  it("refuses offers that would sign a Permit2 or approval flow instead of a plain transfer", async () => {
    const permit2 = {
      ...v2,
      accepts: [
        { ...v2.accepts[0], extra: { name: "USD Coin", version: "2", assetTransferMethod: "permit2" } },
      ],
    };
    const demand = readPaymentDemand(
      headers({ "PAYMENT-REQUIRED": encodePaymentRequiredHeader(permit2 as never) }),
      undefined,
    );
    if (!demand) throw new Error("no demand");
    const scheme = new ExactEvmScheme(privateKeyToAccount(KEY));
    await expect(signOffer(demand, 0, scheme, { amount: 10000n, payTo: PAY_TO })).rejects.toThrow(
      /transfer method/,
    );
  });
});

describe("the same call, written differently", () => {
  it("has one canonical target, so a repeated pay_and_fetch is recognised", () => {
    const a = buildTarget({ url: "http://svc/x?b=2", query: { a: "1" }, body: { y: 1, x: 2 } });
    const b = buildTarget({ url: "http://svc/x", query: { a: "1", b: "2" }, body: { x: 2, y: 1 } });
    expect(a).toEqual(b);
  });
});
