import { decodePaymentSignatureHeader, encodePaymentRequiredHeader } from "@x402/core/http";
import { verifyTypedData } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { describe, expect, it } from "vitest";
import type { NetworkSchemes } from "../../chains/index.js";
import { transferWithAuthorization } from "../../chains/testing/index.js";
import { createSignerRegistry } from "../ports/index.js";
import { buildTarget } from "./probe.js";
import { MAX_OFFERS, readPaymentDemand, SigningError, safeDetail, signOffer } from "./wire.js";

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

const TOKEN = "x402-test-token-0123456789";
const PAYER = privateKeyToAccount(KEY).address;

/** The scheme clients the service's own signer registry hands out for the test key. */
async function schemesFor(network: string): Promise<NetworkSchemes> {
  const registry = createSignerRegistry([{ chain: "evm", privateKey: KEY, tokens: [TOKEN] }], {});
  const found = await registry.find({ chain: "evm", address: PAYER }, { bearerToken: TOKEN });
  if (!found.ok) throw new Error(found.reason);
  return found.signer.schemeFor(network);
}

const demandOf = (required: unknown) => {
  const demand = readPaymentDemand(
    headers({ "PAYMENT-REQUIRED": encodePaymentRequiredHeader(required as never) }),
    undefined,
  );
  if (!demand) throw new Error("no demand");
  return demand;
};

/** A v1 402 body as the `x402` 1.x middleware sends it (`maxAmountRequired`, a v1 network name). */
const v1Body = (over: Record<string, unknown> = {}) => ({
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
      ...over,
    },
  ],
});

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

  it("reads v1 from the JSON body, maps its network names to CAIP-2, and prices it by maxAmountRequired", () => {
    const demand = readPaymentDemand(headers({}), v1Body());
    expect(demand?.version).toBe(1);
    expect(demand?.offers[0]).toMatchObject({ network: "eip155:84532", amount: "25000" });
    // Every v1 name the SDK's v1 schemes sign for maps, Solana's clusters included.
    for (const [name, caip2] of [
      ["base", "eip155:8453"],
      ["polygon-amoy", "eip155:80002"],
      ["solana-devnet", "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1"],
      ["solana", "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp"],
    ]) {
      expect(readPaymentDemand(headers({}), v1Body({ network: name }))?.offers[0]?.network).toBe(caip2);
    }
    // An `amount` next to maxAmountRequired is not what a v1 scheme signs, so it is never the price;
    // without maxAmountRequired the offer has no valid amount.
    const both = readPaymentDemand(headers({}), v1Body({ amount: "1" }));
    expect(both?.offers[0]?.amount).toBe("25000");
    const onlyAmount = readPaymentDemand(headers({}), v1Body({ maxAmountRequired: undefined, amount: "1" }));
    expect(onlyAmount?.offers[0]?.amount).toBe("");
    // A number is shown as what it was, and is no amount admission reads.
    const numeric = readPaymentDemand(headers({}), v1Body({ maxAmountRequired: 10000 }));
    expect(numeric?.offers[0]?.amount).toBe("10000 (not a string)");
    // Unknown names (and object-prototype names) stay unmappable.
    for (const name of ["hardhat", "constructor", "__proto__"]) {
      expect(readPaymentDemand(headers({}), v1Body({ network: name }))?.offers[0]?.network).toBe(
        `v1:${name}`,
      );
    }
  });

  it("reads an absent maxTimeoutSeconds as 0 (the payer's default) and a non-number as invalid", () => {
    const absent = readPaymentDemand(headers({}), v1Body({ maxTimeoutSeconds: undefined }));
    expect(absent?.offers[0]?.maxTimeoutSeconds).toBe(0);
    const text = readPaymentDemand(headers({}), v1Body({ maxTimeoutSeconds: "60" }));
    expect(text?.offers[0]?.maxTimeoutSeconds).toBeNaN();
  });

  // A black-box review (h31): each of these, as the answer to a paid request, threw inside the
  // reading (so the payment's unclear record was never written), or reached the ledger as a NUL
  // PostgreSQL refuses; a million empty offers cost seconds and hundreds of MB in the reasons.
  it("reads a hostile 402 as no demand, or as one with plain text fields, never by throwing", () => {
    const body = (over: Record<string, unknown>) => ({ ...v1Body(), ...over });
    const many = Array.from({ length: MAX_OFFERS + 1 }, () => v1Body().accepts[0]);
    for (const hostile of [{ accepts: many }, { accepts: [null] }, { accepts: [[]] }, { accepts: ["exact"] }])
      expect(
        readPaymentDemand(headers({}), body(hostile)),
        JSON.stringify(hostile).slice(0, 40),
      ).toBeUndefined();
    expect(readPaymentDemand(headers({}), body({ accepts: many.slice(1) }))?.offers).toHaveLength(MAX_OFFERS);

    for (const error of [1, true, { toString: 1 }, ""])
      expect(readPaymentDemand(headers({}), body({ error }))?.error, JSON.stringify(error)).toBeUndefined();
    expect(readPaymentDemand(headers({}), body({ error: "no\u0000 funds\u001b[2J" }))?.error).toBe(
      "no funds[2J",
    );
    expect(readPaymentDemand(headers({}), body({ error: "x".repeat(5000) }))?.error).toHaveLength(500);

    const odd = readPaymentDemand(headers({}), v1Body({ scheme: { toString: 1 }, asset: ["a"], payTo: 7 }));
    expect(odd?.offers[0]).toMatchObject({ scheme: "[object]", asset: "[object]", payTo: "7" });

    // A review (h36): megabytes in one field reached every quote, reason and record naming the offer.
    const huge = "x".repeat(40_000);
    const long = readPaymentDemand(
      headers({}),
      v1Body({ scheme: huge, network: huge, asset: huge, payTo: huge, maxAmountRequired: "9".repeat(5000) }),
    );
    for (const field of ["scheme", "asset", "payTo", "amount"] as const)
      expect(long?.offers[0]?.[field].length, field).toBeLessThanOrEqual(128);
    expect(long?.offers[0]?.network.length).toBeLessThanOrEqual(128);
    expect(long?.offers[0]?.asset).toMatch(/\(40000 characters\)$/);
  });

  it("returns undefined for a 402 that is not x402", () => {
    expect(readPaymentDemand(headers({}), { error: "pay me" })).toBeUndefined();
    expect(readPaymentDemand(headers({ "PAYMENT-REQUIRED": "not base64 json" }), undefined)).toBeUndefined();
  });
});

describe("signing the chosen offer", () => {
  it("signs exactly the quoted amount and recipient, and keeps only what reconciliation needs", async () => {
    const demand = demandOf(v2);
    const schemes = await schemesFor("eip155:31337");
    const signed = await signOffer(demand, 0, schemes, { amount: 10000n, payTo: PAY_TO });
    expect(Object.keys(signed.headers)).toEqual(["PAYMENT-SIGNATURE"]);
    expect(signed.authorization).toMatchObject({ kind: "evm-eip3009", from: PAYER });
    expect(JSON.stringify(signed.authorization)).not.toMatch(/signature/i);
    await expect(signOffer(demand, 0, schemes, { amount: 9999n, payTo: PAY_TO })).rejects.toThrow(
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
    const schemes = await schemesFor("eip155:31337");
    const signing = signOffer(demandOf(permit2), 0, schemes, { amount: 10000n, payTo: PAY_TO });
    await expect(signing).rejects.toThrow(SigningError);
    await expect(signing).rejects.toThrow(/transfer method "permit2"/);
  });

  it("signs a v1 offer with the v1 scheme: maxAmountRequired, the v1 network's chain id, X-PAYMENT", async () => {
    const demand = readPaymentDemand(headers({}), v1Body());
    if (!demand) throw new Error("no demand");
    const signed = await signOffer(demand, 0, await schemesFor("eip155:84532"), {
      amount: 25000n,
      payTo: PAY_TO,
    });
    expect(Object.keys(signed.headers)).toEqual(["X-PAYMENT"]);
    const payload = JSON.parse(Buffer.from(signed.headers["X-PAYMENT"] ?? "", "base64").toString()) as {
      x402Version: number;
      scheme: string;
      network: string;
      payload: { signature: `0x${string}`; authorization: Record<string, string> };
    };
    expect(payload).toMatchObject({ x402Version: 1, scheme: "exact", network: "base-sepolia" });
    const auth = payload.payload.authorization;
    expect(auth).toMatchObject({ from: PAYER, value: "25000" });
    // The signature is valid for Base Sepolia's chain id, as a v1 facilitator checks it.
    const valid = await verifyTypedData({
      address: PAYER,
      ...transferWithAuthorization(
        {
          name: "USDC",
          version: "2",
          chainId: 84532,
          verifyingContract: "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
        },
        {
          from: PAYER,
          to: PAY_TO,
          value: 25000n,
          validAfter: BigInt(auth.validAfter ?? 0),
          validBefore: BigInt(auth.validBefore ?? 0),
          nonce: auth.nonce as `0x${string}`,
        },
      ),
      signature: payload.payload.signature,
    });
    expect(valid).toBe(true);
    expect(signed.authorization).toMatchObject({ kind: "evm-eip3009", validBefore: auth.validBefore });
  });

  it("signs maxTimeoutSeconds 0 with the default window, and echoes the offer unchanged", async () => {
    const zero = { ...v2, accepts: [{ ...v2.accepts[0], maxTimeoutSeconds: 0 }] };
    const schemes = await schemesFor("eip155:31337");
    const now = Math.floor(Date.now() / 1000);
    const signed = await signOffer(demandOf(zero), 0, schemes, { amount: 10000n, payTo: PAY_TO });
    const validBefore = Number(signed.authorization.validBefore);
    expect(validBefore).toBeGreaterThanOrEqual(now + 59);
    expect(validBefore).toBeLessThanOrEqual(now + 62);
    const sent = decodePaymentSignatureHeader(signed.headers["PAYMENT-SIGNATURE"] ?? "");
    expect(sent.accepted).toEqual(zero.accepts[0]);
    expect(
      Number((sent.payload as { authorization: { validBefore: string } }).authorization.validBefore),
    ).toBe(validBefore);
    // The window the policy chose (bounded by the server) is the one signed.
    const bounded = await signOffer(demandOf(zero), 0, schemes, {
      amount: 10000n,
      payTo: PAY_TO,
      maxTimeoutSeconds: 20,
    });
    expect(Number(bounded.authorization.validBefore)).toBeLessThanOrEqual(now + 22);
  });

  it("throws a SigningError that names the step and carries no key, RPC path or query", async () => {
    const leaky: NetworkSchemes["v2"] = {
      scheme: "exact",
      createPaymentPayload: async () => {
        throw new Error(
          `RPC https://user:pw@rpc.example/v2/SECRETPATH?api-key=SECRETQUERY failed for ${KEY}\nsecond line ${KEY}`,
        );
      },
    };
    const signing = signOffer(demandOf(v2), 0, { v2: leaky, v1: leaky }, { amount: 10000n, payTo: PAY_TO });
    await expect(signing).rejects.toThrow(SigningError);
    const message = await signing.catch((e: Error) => e.message);
    expect(message).toMatch(
      /x402 v2 "eip155:31337" scheme could not sign: RPC https:\/\/rpc\.example failed/,
    );
    for (const secret of [KEY, KEY.slice(2), "SECRETPATH", "SECRETQUERY", "pw@", "second line"]) {
      expect(message).not.toContain(secret);
    }
    expect(safeDetail("5".repeat(88))).toBe("[redacted]");
  });
});

describe("the same call, written differently", () => {
  it("has one canonical target, so a repeated pay_and_fetch is recognised", () => {
    const a = buildTarget({ url: "http://svc/x?b=2", query: { a: "1" }, body: { y: 1, x: 2 } });
    const b = buildTarget({ url: "http://svc/x", query: { a: "1", b: "2" }, body: { x: 2, y: 1 } });
    expect(a).toEqual(b);
    // At every depth, arrays kept in their order.
    const c = buildTarget({ url: "http://svc/x", body: { text: "t", meta: { a: 1, b: [{ d: 1, c: 2 }] } } });
    const d = buildTarget({ url: "http://svc/x", body: { meta: { b: [{ c: 2, d: 1 }], a: 1 }, text: "t" } });
    expect(c).toEqual(d);
    expect(c.body).toBe('{"meta":{"a":1,"b":[{"c":2,"d":1}]},"text":"t"}');
  });

  it("drops the fragment, which is never sent: with one or another it is the same call", () => {
    const plain = buildTarget({ url: "http://svc/x?a=1" });
    expect(buildTarget({ url: "http://svc/x?a=1#again" })).toEqual(plain);
    expect(buildTarget({ url: "http://svc/x?a=1#" })).toEqual(plain);
    expect(plain.url).toBe("http://svc/x?a=1");
  });

  it("is the same call however its URL is spelt: escapes, case, default port, query order", () => {
    const plain = buildTarget({ url: "http://svc.example/weather/paris?a=1&b=2" });
    for (const url of [
      "http://svc.example/weath%65r/paris?a=1&b=2",
      "http://svc.example/weath%65r/%70aris?b=2&a=1",
      "HTTP://SVC.example:80/weather/paris?a=1&b=2&",
      "http://svc.example/weather/./paris?%61=1&b=2",
    ])
      expect(buildTarget({ url }), url).toEqual(plain);
    // Escapes of reserved characters stay escapes (a different path), their hex upper-cased.
    expect(buildTarget({ url: "http://svc.example/a%2fb" }).url).toBe("http://svc.example/a%2Fb");
    expect(buildTarget({ url: "http://svc.example/a%2Fb" })).not.toEqual(
      buildTarget({ url: "http://svc.example/a/b" }),
    );
  });
});
