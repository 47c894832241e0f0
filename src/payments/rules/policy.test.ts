import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { SpendingLimitsInput } from "../../protocol/request.js";
import {
  type AmountLimits,
  checkSpend,
  chooseOffer,
  isServiceAllowed,
  type LimitsConfig,
  limitRemaining,
  type OfferContext,
  type Requirement,
  resolveLimits,
  SUGGESTED_LIMITS,
  signingWindowSeconds,
} from "./index.js";

const USD = 1_000_000n;
const NETWORKS = ["eip155:8453", "eip155:31337", "eip155:84532", "solana:devnet", "solana:mainnet"];
const SERVICES = ["https://a.example", "https://b.example", "http://localhost:4021"];

const server: LimitsConfig = {
  ...SUGGESTED_LIMITS,
  allowedNetworks: ["eip155:31337", "solana:devnet"],
  allowedServices: "any",
};

const amount = fc.bigInt({ min: 0n, max: 2000n * USD });
const amounts = fc.record({ perTransaction: amount, perRequest: amount, daily: amount });
const serverArb: fc.Arbitrary<LimitsConfig> = fc.record({
  defaults: amounts,
  caps: amounts,
  allowedNetworks: fc.subarray(NETWORKS),
  allowedServices: fc.oneof(fc.constant("any" as const), fc.subarray(SERVICES)),
});
const requestArb: fc.Arbitrary<SpendingLimitsInput | undefined> = fc.option(
  fc.record(
    {
      perTransaction: amount,
      perRequest: amount,
      daily: amount,
      allowedNetworks: fc.subarray(NETWORKS),
      allowedServices: fc.subarray(SERVICES),
    },
    { requiredKeys: [] },
  ),
  { nil: undefined },
);

describe("resolveLimits", () => {
  it("uses the defaults when the request has no limits", () => {
    expect(resolveLimits(server)).toEqual({
      perTransaction: 1n * USD,
      perRequest: 2n * USD,
      daily: 10n * USD,
      allowedNetworks: ["eip155:31337", "solana:devnet"],
      allowedServices: "any",
    });
  });

  it("lets a request tighten but never loosen", () => {
    const limits = resolveLimits(server, {
      perTransaction: 5000n * USD,
      daily: 3n * USD,
      allowedNetworks: ["eip155:8453", "eip155:31337"],
      allowedServices: ["https://a.example/path"],
    });
    expect(limits).toEqual({
      perTransaction: 100n * USD,
      perRequest: 2n * USD,
      daily: 3n * USD,
      allowedNetworks: ["eip155:31337"],
      allowedServices: ["https://a.example"],
    });
  });

  it("never loosens anything the server sets (property)", () => {
    fc.assert(
      fc.property(serverArb, requestArb, (config, request) => {
        const limits = resolveLimits(config, request);
        for (const key of ["perTransaction", "perRequest", "daily"] as const) {
          expect(limits[key] <= config.caps[key]).toBe(true);
          const asked = request?.[key];
          if (asked !== undefined) expect(limits[key] <= asked).toBe(true);
          else expect(limits[key] <= config.defaults[key]).toBe(true);
        }
        for (const n of limits.allowedNetworks) {
          expect(config.allowedNetworks).toContain(n);
          if (request?.allowedNetworks) expect(request.allowedNetworks).toContain(n);
        }
        if (config.allowedServices !== "any") {
          expect(limits.allowedServices).not.toBe("any");
          for (const s of limits.allowedServices) expect(config.allowedServices).toContain(s);
        }
        if (request?.allowedServices) {
          expect(limits.allowedServices).not.toBe("any");
          for (const s of limits.allowedServices) expect(request.allowedServices).toContain(s);
        }
      }),
    );
  });

  it("checks service origins", () => {
    const limits = resolveLimits(server, { allowedServices: ["https://a.example"] });
    expect(isServiceAllowed("https://a.example/weather?q=Paris", limits)).toBe(true);
    expect(isServiceAllowed("https://a.example.evil.test/", limits)).toBe(false);
    expect(isServiceAllowed("http://a.example/", limits)).toBe(false);
    expect(isServiceAllowed("not a url", limits)).toBe(false);
    expect(isServiceAllowed("https://anything.test/", resolveLimits(server))).toBe(true);
  });
});

describe("checkSpend", () => {
  const limits: AmountLimits = { perTransaction: 1n * USD, perRequest: 2n * USD, daily: 10n * USD };

  it("names the first limit exceeded, in order perTransaction, perRequest, daily", () => {
    expect(checkSpend(USD, limits, { today: 0n, thisRequest: 0n })).toEqual({ ok: true });
    expect(checkSpend(USD + 1n, limits, { today: 0n, thisRequest: 0n })).toEqual({
      ok: false,
      limit: "perTransaction",
      limitAtomic: USD,
      remainingAtomic: USD,
      amountAtomic: USD + 1n,
    });
    expect(checkSpend(USD, limits, { today: 9n * USD + 1n, thisRequest: USD + 1n })).toMatchObject({
      ok: false,
      limit: "perRequest",
      remainingAtomic: USD - 1n,
    });
    expect(checkSpend(USD, limits, { today: 9n * USD + 1n, thisRequest: 0n })).toMatchObject({
      ok: false,
      limit: "daily",
      limitAtomic: 10n * USD,
      remainingAtomic: USD - 1n,
    });
    expect(checkSpend(0n, limits, { today: 20n * USD, thisRequest: 0n })).toEqual({ ok: true });
  });

  it("refuses a negative amount loudly", () => {
    expect(() => checkSpend(-1n, limits, { today: 0n, thisRequest: 0n })).toThrow(RangeError);
  });

  it("never approves an amount that would exceed any limit (property)", () => {
    fc.assert(
      fc.property(amounts, amount, amount, amount, (lim, price, today, thisRequest) => {
        const result = checkSpend(price, lim, { today, thisRequest });
        // A zero price fits even when a limit is already used up (nothing more is spent).
        const fits =
          price === 0n ||
          (price <= lim.perTransaction &&
            thisRequest + price <= lim.perRequest &&
            today + price <= lim.daily);
        expect(result.ok).toBe(fits);
        if (!result.ok) {
          expect(result.amountAtomic).toBe(price);
          expect(result.remainingAtomic).toBe(limitRemaining(lim, { today, thisRequest })[result.limit]);
          expect(price > result.remainingAtomic).toBe(true);
        }
      }),
    );
  });

  it("reports what remains, never negative", () => {
    expect(limitRemaining(limits, { today: 11n * USD, thisRequest: USD / 2n })).toEqual({
      perTransaction: USD,
      perRequest: (3n * USD) / 2n,
      daily: 0n,
    });
  });
});

const EVM_USDC = "0x036CbD53842c5426634e7929541eC2318f3dCF7e";
const SOL_USDC = "4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU";
const ctx: OfferContext = {
  walletChain: "evm",
  allowedNetworks: ["eip155:31337", "eip155:84532", "solana:devnet"],
  allowedAssets: { "eip155:31337": [EVM_USDC], "eip155:84532": [EVM_USDC], "solana:devnet": [SOL_USDC] },
  preferredNetworks: ["eip155:84532"],
  maxTimeoutSeconds: 600,
};
/** A Solana account to pay (base58, 32 bytes). */
const SOL_PAYEE = "4uQeVj5tqViQh7yWWGStvkEG1Zmhx6uasJtWCJziofM";
const offer = (over: Partial<Requirement> = {}): Requirement => ({
  scheme: "exact",
  network: "eip155:31337",
  amount: "10000",
  asset: EVM_USDC,
  payTo: "0x000000000000000000000000000000000000dEaD",
  maxTimeoutSeconds: 60,
  ...over,
});

describe("chooseOffer", () => {
  it("picks the preferred network, then the cheapest", () => {
    const cheap = offer({ amount: "5000" });
    const preferred = offer({ network: "eip155:84532", amount: "9000" });
    expect(chooseOffer([offer(), cheap, preferred], ctx)).toMatchObject({
      ok: true,
      offer: preferred,
      amount: 9000n,
    });
    expect(chooseOffer([offer(), cheap], ctx)).toMatchObject({ ok: true, offer: cheap });
  });

  it("compares EVM assets case-insensitively", () => {
    expect(chooseOffer([offer({ asset: EVM_USDC.toLowerCase() })], ctx).ok).toBe(true);
    const sol = { ...ctx, walletChain: "solana" as const };
    const onSolana = { network: "solana:devnet", payTo: SOL_PAYEE };
    expect(chooseOffer([offer({ ...onSolana, asset: SOL_USDC.toLowerCase() })], sol).ok).toBe(false);
    expect(chooseOffer([offer({ ...onSolana, asset: SOL_USDC })], sol).ok).toBe(true);
  });

  /*
   * Found by a black-box run: a Solana offer naming the paying wallet as its fee payer was signed
   * (and chosen over a dearer fair offer): the transaction was complete with the wallet's signature
   * alone, the wallet paid the fee and the seller could send it without a facilitator.
   */
  it("never chooses a Solana offer that makes the paying wallet its fee payer", () => {
    const wallet = "Fye9P7MPYWQM5xvLNKYBa3FAKHQHNCvPjMd4GmRAJNSH";
    const sol = { ...ctx, walletChain: "solana" as const, payers: [wallet] };
    const fair = offer({
      network: "solana:devnet",
      asset: SOL_USDC,
      payTo: SOL_PAYEE,
      extra: { feePayer: "FaciL1tator1111111111111111111111111111111" },
    });
    const trap = offer({
      network: "solana:devnet",
      asset: SOL_USDC,
      payTo: SOL_PAYEE,
      amount: "1",
      extra: { feePayer: wallet },
    });
    expect(chooseOffer([fair, trap], sol)).toMatchObject({ ok: true, offer: fair });
    expect(chooseOffer([trap], sol)).toMatchObject({ ok: false, rejections: [{ code: "wallet_pays_fee" }] });
  });

  // Found by a black-box run (h51): signed, "settled" and counted against the limits, moving nothing.
  it("refuses an offer that pays the paying wallet (or the tab's session key) itself", () => {
    const evmWallet = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
    const own = { ...ctx, payers: [evmWallet] };
    const self = chooseOffer([offer({ payTo: evmWallet.toLowerCase() })], own);
    expect(self).toMatchObject({ ok: false, rejections: [{ code: "invalid_payee" }] });
    expect(JSON.stringify(self)).toContain("the paying wallet itself");
    expect(chooseOffer([offer()], own)).toMatchObject({ ok: true });
    const wallet = "Fye9P7MPYWQM5xvLNKYBa3FAKHQHNCvPjMd4GmRAJNSH";
    const sol = { ...ctx, walletChain: "solana" as const, payers: [wallet] };
    const toSelf = offer({ network: "solana:devnet", asset: SOL_USDC, payTo: wallet });
    expect(chooseOffer([toSelf], sol)).toMatchObject({ ok: false, rejections: [{ code: "invalid_payee" }] });
  });

  it("refuses an offer whose payee cannot receive the transfer: never signed to hold the budget for nothing", () => {
    for (const payTo of ["0x123", "0x0000000000000000000000000000000000000000", "not an address", EVM_USDC]) {
      const choice = chooseOffer([offer({ payTo })], ctx);
      expect(choice).toMatchObject({ ok: false, rejections: [{ code: "invalid_payee" }] });
      // The refusal quotes the address whole (it was cut at 40 characters, 2 short of an EVM address).
      expect(JSON.stringify(choice)).toContain(JSON.stringify(payTo).slice(1, -1));
    }
    const sol = { ...ctx, walletChain: "solana" as const };
    for (const payTo of [
      "0x1234567890123456789012345678901234567890",
      "11111111111111111111111111111111",
      "Vote111111111111111111111111111111111111111",
      "SysvarRent111111111111111111111111111111111",
      SOL_USDC,
    ]) {
      const bad = offer({ network: "solana:devnet", asset: SOL_USDC, payTo });
      expect(chooseOffer([bad], sol)).toMatchObject({ ok: false, rejections: [{ code: "invalid_payee" }] });
    }
    // A program-derived address (off the curve) may own a token account: it is a payee.
    const pda = offer({
      network: "solana:devnet",
      asset: SOL_USDC,
      payTo: "4uQeVj5tqViQh7yWWGStvkEG1Zmhx6uasJtWCJziofM",
    });
    expect(chooseOffer([pda], sol)).toMatchObject({ ok: true });
  });

  it("never falls back to the first offer, and says why each was rejected", () => {
    const result = chooseOffer(
      [
        offer({ scheme: "upto" }),
        offer({ network: "eip155:1" }),
        offer({ network: "solana:devnet", asset: SOL_USDC }),
        offer({ asset: "0x0000000000000000000000000000000000000001" }),
        offer({ maxTimeoutSeconds: 86_400 }),
        offer({ maxTimeoutSeconds: -1 }),
        offer({ extra: { assetTransferMethod: "permit2" } }),
        offer({ amount: "-1" }),
        offer({ amount: "1.5" }),
        { scheme: "exact" } as unknown as Requirement,
      ],
      ctx,
    );
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.code).toBe("no_acceptable_offer");
    expect(result.rejections.map((r) => r.code)).toEqual([
      "unsupported_scheme",
      "network_not_allowed",
      "wrong_chain",
      "asset_not_allowed",
      "timeout_too_long",
      "invalid_timeout",
      "unsupported_transfer_method",
      "invalid_amount",
      "invalid_amount",
      "malformed_offer",
    ]);
    expect(result.reason).toMatch(/offer 1 .*"upto"/);
  });

  it("refuses offers it cannot sign (Permit2, approvals, other schemes) before any reservation", () => {
    for (const method of ["permit2", "approve", "EIP3009", 3009, null]) {
      const result = chooseOffer([offer({ extra: { name: "USD Coin", assetTransferMethod: method } })], ctx);
      expect(result).toMatchObject({
        ok: false,
        rejections: [{ code: "unsupported_transfer_method" }],
      });
      if (!result.ok) expect(result.reason).toContain(JSON.stringify(String(method)));
    }
    const permit2 = chooseOffer([offer({ extra: { assetTransferMethod: "permit2" } })], ctx);
    expect(permit2.ok ? "" : permit2.reason).toMatch(/"permit2" is not supported/);
    const upto = chooseOffer([offer({ scheme: "upto" })], ctx);
    expect(upto).toMatchObject({ ok: false, rejections: [{ code: "unsupported_scheme" }] });
    expect(upto.ok ? "" : upto.reason).toMatch(/scheme "upto"/);
    // The plain transfer, stated or implied, is fine; a Permit2 twin next to it does not win.
    const plain = offer({ extra: { assetTransferMethod: "eip3009" } });
    const cheaperPermit2 = offer({ amount: "1", extra: { assetTransferMethod: "permit2" } });
    expect(chooseOffer([cheaperPermit2, plain], ctx)).toMatchObject({ ok: true, offer: plain });
    // An untrusted value in a reason is bounded and quoted.
    const long = chooseOffer([offer({ scheme: `x${"y".repeat(500)}"` })], ctx);
    expect(long.ok ? "" : long.reason.length).toBeLessThan(200);
  });

  it("reads maxTimeoutSeconds 0 (or absent) as the payer's default window, within the server's bound", () => {
    expect(chooseOffer([offer({ maxTimeoutSeconds: 0 })], ctx)).toMatchObject({
      ok: true,
      timeoutSeconds: 60,
    });
    const absent = offer();
    delete (absent as Partial<Requirement>).maxTimeoutSeconds;
    expect(chooseOffer([absent], ctx)).toMatchObject({ ok: true, offer: absent, timeoutSeconds: 60 });
    expect(chooseOffer([offer({ maxTimeoutSeconds: 0 })], { ...ctx, maxTimeoutSeconds: 20 })).toMatchObject({
      ok: true,
      timeoutSeconds: 20,
    });
    expect(chooseOffer([offer({ maxTimeoutSeconds: 300 })], ctx)).toMatchObject({ timeoutSeconds: 300 });
    for (const bad of [-1, Number.NaN, 1.5, Number.POSITIVE_INFINITY, "60" as unknown as number]) {
      const result = chooseOffer([offer({ maxTimeoutSeconds: bad })], ctx);
      expect(result).toMatchObject({ ok: false, rejections: [{ code: "invalid_timeout" }] });
      expect(result.ok ? "" : result.reason).not.toMatch(/NaN/);
    }
    expect(chooseOffer([offer({ maxTimeoutSeconds: 601 })], ctx)).toMatchObject({
      ok: false,
      rejections: [{ code: "timeout_too_long" }],
    });
    expect(signingWindowSeconds(0, 600)).toBe(60);
    expect(signingWindowSeconds(45, 600)).toBe(45);
  });

  it("refuses an empty list", () => {
    expect(chooseOffer([], ctx)).toMatchObject({ ok: false, code: "no_offers" });
  });

  it("only returns an offer that satisfies every rule (property)", () => {
    // Mostly valid fields, each sometimes wrong, so that both refusals and choices are exercised.
    const often = <T>(valid: fc.Arbitrary<T>, invalid: fc.Arbitrary<T>) =>
      fc.oneof({ arbitrary: valid, weight: 4 }, { arbitrary: invalid, weight: 1 });
    const offerArb: fc.Arbitrary<Requirement> = fc.record({
      scheme: often(fc.constant("exact"), fc.constantFrom("upto", "EXACT")),
      network: often(fc.constantFrom(...NETWORKS), fc.constantFrom("eip155:1", "cosmos:hub")),
      amount: often(
        fc.bigInt({ min: 0n, max: 10n ** 30n }).map(String),
        fc.constantFrom("-1", "1.0", "", "01", "1e6", " 1"),
      ),
      asset: often(fc.constantFrom(EVM_USDC, EVM_USDC.toLowerCase(), SOL_USDC), fc.constant("0xbad")),
      payTo: often(fc.constant("0x000000000000000000000000000000000000dEaD"), fc.constant("")),
      maxTimeoutSeconds: often(
        fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 1200 })),
        fc.constantFrom(-1, -10, Number.NaN, 1.5, Number.POSITIVE_INFINITY),
      ),
      extra: often<Record<string, unknown> | undefined>(
        fc.constantFrom(undefined, { name: "USD Coin", version: "2" }, { assetTransferMethod: "eip3009" }),
        fc.constantFrom({ assetTransferMethod: "permit2" }, { assetTransferMethod: "approve" }),
      ),
    });
    const ctxArb: fc.Arbitrary<OfferContext> = fc.record({
      walletChain: fc.constantFrom("evm" as const, "solana" as const),
      allowedNetworks: fc.subarray(NETWORKS),
      allowedAssets: fc.constant(ctx.allowedAssets),
      preferredNetworks: fc.shuffledSubarray(NETWORKS),
      maxTimeoutSeconds: fc.integer({ min: 1, max: 1000 }),
    });
    let accepted = 0;
    fc.assert(
      fc.property(fc.array(offerArb, { maxLength: 8 }), ctxArb, (offers, c) => {
        const result = chooseOffer(offers, c);
        if (!result.ok) {
          expect(result.rejections.length).toBe(offers.length);
          return;
        }
        accepted++;
        const o = result.offer;
        expect(offers).toContain(o);
        expect(o.scheme).toBe("exact");
        expect(c.allowedNetworks).toContain(o.network);
        expect(o.network.startsWith(c.walletChain === "evm" ? "eip155:" : "solana:")).toBe(true);
        const assets = c.allowedAssets[o.network] ?? [];
        const evm = o.network.startsWith("eip155:");
        expect(assets.some((a) => (evm ? a.toLowerCase() === o.asset.toLowerCase() : a === o.asset))).toBe(
          true,
        );
        expect(Number.isInteger(o.maxTimeoutSeconds) && o.maxTimeoutSeconds >= 0).toBe(true);
        expect(o.maxTimeoutSeconds <= c.maxTimeoutSeconds).toBe(true);
        // What gets signed is a positive window within the server's bound.
        expect(result.timeoutSeconds).toBeGreaterThan(0);
        expect(result.timeoutSeconds).toBeLessThanOrEqual(c.maxTimeoutSeconds);
        expect(result.timeoutSeconds).toBe(o.maxTimeoutSeconds || Math.min(60, c.maxTimeoutSeconds));
        const method = o.extra?.assetTransferMethod;
        expect(method === undefined || method === "eip3009").toBe(true);
        expect(o.amount).toMatch(/^(0|[1-9][0-9]*)$/);
        expect(result.amount).toBe(BigInt(o.amount));
      }),
      { numRuns: 1000 },
    );
    // The property must have seen accepted offers, not only refusals. About 3 % of the random
    // demands pass (about 30 of 1,000); a bound near that mean failed once in a full run, so the
    // bound is far below it: the point is that some do.
    expect(accepted).toBeGreaterThan(5);
  });
});
