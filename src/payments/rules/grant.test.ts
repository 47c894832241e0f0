import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { SpendingLimitsInput } from "../../protocol/request.js";
import {
  budgetMeter,
  checkSpend,
  dailyOf,
  type GrantCaps,
  isWalletAllowed,
  type LimitsConfig,
  limitRemaining,
  resolveLimits,
  type SpendLimits,
  SUGGESTED_LIMITS,
  tighterCaps,
} from "./index.js";

/**
 * An operator's key's caps (docs/payments.md#spending-limits): a request's limits apply up to the service's
 * caps and the key's caps; the key's daily also counts over every wallet it pays from; its wallets
 * are the only ones that may pay. Pure, so each rule is property-tested here.
 */

const USD = 1_000_000n;
const smaller = (a: bigint, b: bigint): bigint => (a < b ? a : b);
const CENT = USD / 100n;
const server: LimitsConfig = {
  ...SUGGESTED_LIMITS,
  allowedNetworks: ["eip155:31337"],
  allowedServices: "any",
};

const amount = fc.bigInt({ min: 0n, max: 2000n * USD });
const amounts = fc.record({ perTransaction: amount, perRequest: amount, daily: amount });
const serverArb: fc.Arbitrary<LimitsConfig> = fc.record({
  defaults: amounts,
  caps: amounts,
  allowedNetworks: fc.constant(["eip155:31337"]),
  allowedServices: fc.constant("any" as const),
});
const requestArb: fc.Arbitrary<SpendingLimitsInput | undefined> = fc.option(
  fc.record({ perTransaction: amount, perRequest: amount, daily: amount }, { requiredKeys: [] }),
  { nil: undefined },
);
const grantArb: fc.Arbitrary<GrantCaps | undefined> = fc.option(
  fc.record({ perTransaction: amount, perRequest: amount, daily: amount }, { requiredKeys: [] }),
  { nil: undefined },
);

describe("resolveLimits with a key's grant", () => {
  it("the key's caps bound whatever the request asks: under a $0.02-a-day key, the key's day is $0.02", () => {
    const limits = resolveLimits(
      server,
      { perTransaction: 50n * USD, daily: 100n * USD },
      { daily: 2n * CENT, perTransaction: CENT },
    );
    // The wallet's day is the request's; the key's day counts the key's own spend, and both hold
    // (dailyOf names the one that binds).
    expect(limits).toMatchObject({
      perTransaction: CENT,
      perRequest: 2n * USD,
      daily: 100n * USD,
      callerDaily: 2n * CENT,
    });
    expect(dailyOf(limits, { today: 0n, thisRequest: 0n, callerToday: CENT })).toEqual({
      limit: 2n * CENT,
      remaining: CENT,
      byCaller: true,
    });
    expect(limits.allowedWallets).toBeUndefined();
  });

  it("without request limits the defaults apply, within the key's caps", () => {
    expect(resolveLimits(server, undefined, { perRequest: USD / 2n })).toMatchObject({
      perTransaction: USD,
      perRequest: USD / 2n,
      daily: 10n * USD,
    });
    // A key cap above the server's cap does not raise it.
    expect(
      resolveLimits(server, { perTransaction: 500n * USD }, { perTransaction: 500n * USD }),
    ).toMatchObject({ perTransaction: 100n * USD });
  });

  it("without a key, a request's limits apply up to the service's caps (the rule the docs state)", () => {
    expect(resolveLimits(server, { perTransaction: 50n * USD })).toMatchObject({ perTransaction: 50n * USD });
    expect(resolveLimits(server, { daily: 5000n * USD })).toMatchObject({ daily: 1000n * USD });
  });

  it("is min(request ?? default, key cap ?? server cap, server cap) for each amount but the wallet's day (property)", () => {
    fc.assert(
      fc.property(serverArb, requestArb, grantArb, (config, request, grant) => {
        const limits = resolveLimits(config, request, grant);
        expect(limits.daily).toBe(
          [request?.daily ?? config.defaults.daily, config.caps.daily].reduce(smaller),
        );
        for (const key of ["perTransaction", "perRequest"] as const) {
          const candidates = [
            request?.[key] ?? config.defaults[key],
            grant?.[key] ?? config.caps[key],
            config.caps[key],
          ];
          expect(limits[key]).toBe(candidates.reduce(smaller));
          if (grant?.[key] !== undefined) expect(limits[key] <= (grant[key] ?? 0n)).toBe(true);
        }
        expect(limits.callerDaily).toBe(grant?.daily);
      }),
    );
  });

  it("keeps the key's wallets: only they may pay (EVM without regard to case)", () => {
    const a = "0x00000000000000000000000000000000000a11cE";
    const limits = resolveLimits(server, undefined, { wallets: [a] });
    expect(isWalletAllowed(a.toLowerCase(), limits)).toBe(true);
    expect(isWalletAllowed("0x00000000000000000000000000000000000b0b00", limits)).toBe(false);
    expect(isWalletAllowed("9wzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM", limits)).toBe(false);
    expect(isWalletAllowed("anything", resolveLimits(server))).toBe(true);
    const sol = "9wzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM";
    const solana = resolveLimits(server, undefined, { wallets: [sol] });
    expect(isWalletAllowed(sol, solana)).toBe(true);
    expect(isWalletAllowed(sol.toLowerCase(), solana)).toBe(false);
  });
});

describe("the key's daily cap over all its wallets", () => {
  const limits: SpendLimits = { perTransaction: USD, perRequest: USD, daily: USD, callerDaily: 2n * CENT };

  it("refuses what passes the wallet's day but not the key's, naming `daily` and the key's remaining", () => {
    expect(checkSpend(CENT, limits, { today: 0n, thisRequest: 0n, callerToday: CENT })).toEqual({ ok: true });
    expect(checkSpend(CENT, limits, { today: 0n, thisRequest: 0n, callerToday: 2n * CENT })).toEqual({
      ok: false,
      limit: "daily",
      limitAtomic: 2n * CENT,
      remainingAtomic: 0n,
      amountAtomic: CENT,
    });
    // The wallet's own day, when less of it remains, is the one named.
    expect(checkSpend(CENT, limits, { today: USD - CENT / 2n, thisRequest: 0n, callerToday: 0n })).toEqual({
      ok: false,
      limit: "daily",
      limitAtomic: USD,
      remainingAtomic: CENT / 2n,
      amountAtomic: CENT,
    });
  });

  it("never approves what would pass either day (property)", () => {
    fc.assert(
      fc.property(amount, amount, amount, amount, amount, (wallet, key, price, today, callerToday) => {
        const lim = { perTransaction: 3000n * USD, perRequest: 3000n * USD, daily: wallet, callerDaily: key };
        const committed = { today, thisRequest: 0n, callerToday };
        const result = checkSpend(price, lim, committed);
        const fits = price === 0n || (today + price <= wallet && callerToday + price <= key);
        expect(result.ok).toBe(fits);
        const least = smaller(wallet - today, key - callerToday);
        const left = limitRemaining(lim, committed).daily;
        expect(left).toBe(least < 0n ? 0n : least);
        if (!result.ok) expect(result.remainingAtomic).toBe(left);
      }),
    );
  });
});

describe("the budget meter under a key's daily cap", () => {
  const snapshot = { daySpent: CENT, dayPending: 0n, requestSpent: 0n, requestPending: 0n };

  it("shows the key's day when it binds tighter than the wallet's", () => {
    const limits = { perTransaction: USD, perRequest: USD, daily: 5n * CENT, callerDaily: 2n * CENT };
    const meter = budgetMeter(
      { limits, snapshot: { ...snapshot, callerSpent: CENT, callerPending: 0n } },
      CENT,
      "quoted",
    );
    expect(meter.daily).toMatchObject({
      limit: { usd: "0.02" },
      spent: { usd: "0.01" },
      remaining: { usd: "0.01" },
      remainingAfter: { usd: "0.00" },
    });
  });

  it("shows the wallet's day when the key leaves more", () => {
    const limits = { perTransaction: USD, perRequest: USD, daily: 2n * CENT, callerDaily: USD };
    const meter = budgetMeter(
      { limits, snapshot: { ...snapshot, callerSpent: CENT, callerPending: 0n } },
      CENT,
      "reserved",
    );
    expect(meter.daily).toMatchObject({
      limit: { usd: "0.02" },
      spent: { usd: "0.01" },
      pending: { usd: "0.01" },
    });
  });
});

describe("tighterCaps", () => {
  it("takes each cap's smaller and the wallets both allow; one side absent is the other", () => {
    const a: GrantCaps = { daily: 5n, perTransaction: 3n, wallets: ["0xAa", "0xbb"] };
    const b: GrantCaps = { daily: 2n, perRequest: 7n, wallets: ["0xaa"] };
    expect(tighterCaps(a, b)).toEqual({ perTransaction: 3n, perRequest: 7n, daily: 2n, wallets: ["0xAa"] });
    expect(tighterCaps(undefined, b)).toBe(b);
    expect(tighterCaps(a, undefined)).toBe(a);
    expect(tighterCaps(undefined, undefined)).toBeUndefined();
  });
});
