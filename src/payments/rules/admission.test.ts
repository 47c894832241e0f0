import { describe, expect, it } from "vitest";
import {
  type AdmissionPolicy,
  type AdmissionRequest,
  admit,
  type EffectiveLimits,
  payerFor,
  type Requirement,
} from "./index.js";

/** Admission (pure): the one check a quote and a payment share, rule by rule, in its order. */

const USD = 1_000_000n;
const NETWORK = "eip155:84532";
const ASSET = "0x036CbD53842c5426634e7929541eC2318f3dCF7e";
const offer = (over: Partial<Requirement> = {}): Requirement => ({
  scheme: "exact",
  network: NETWORK,
  amount: "250000",
  asset: ASSET,
  payTo: "0x000000000000000000000000000000000000dEaD",
  maxTimeoutSeconds: 60,
  ...over,
});
const limits: EffectiveLimits = {
  perTransaction: USD,
  perRequest: 2n * USD,
  daily: 10n * USD,
  allowedNetworks: [NETWORK],
  allowedServices: "any",
};
const policy: AdmissionPolicy = {
  assets: { [NETWORK]: [ASSET] },
  preferredNetworks: [NETWORK],
  maxTimeoutSeconds: 300,
  minTimeLeftMs: 5_000,
};
const request = (over: Partial<AdmissionRequest> = {}): AdmissionRequest => ({
  wallet: { chain: "evm", address: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8" },
  limits,
  timeLeftMs: 60_000,
  serverKey: true,
  ...over,
});

describe("admission", () => {
  it("admits the offer policy chose, with the amount and the window to sign", () => {
    const offers = [offer({ network: "eip155:1" }), offer()];
    expect(admit(offers, request(), policy)).toEqual({
      ok: true,
      offer: offers[1],
      index: 1,
      amount: 250_000n,
      timeoutSeconds: 60,
      payer: { by: "server" },
    });
  });

  it.each([
    ["no offer on an allowed network", [offer({ network: "eip155:1" })], {}, "network_not_allowed", false],
    [
      "no acceptable offer",
      [offer({ asset: "0x0000000000000000000000000000000000000001" })],
      {},
      "no_acceptable_offer",
      false,
    ],
    ["a maxUsd that is not an amount", [offer()], { shownUsd: "cheap" }, "invalid_max_usd", true],
    ["a price above the one shown", [offer()], { shownUsd: "0.20" }, "price_changed", true],
    ["too little time left", [offer()], { timeLeftMs: 4_999 }, "too_little_time", true],
    [
      "over the per-transaction limit",
      [offer({ amount: "1000001" })],
      { committed: { today: 0n, thisRequest: 0n } },
      "limit_exceeded",
      true,
    ],
    [
      "over what remains of the request",
      [offer()],
      { committed: { today: 0n, thisRequest: 1_800_000n } },
      "limit_exceeded",
      true,
    ],
    [
      "over what remains of the day",
      [offer()],
      { committed: { today: 9_800_000n, thisRequest: 0n } },
      "limit_exceeded",
      true,
    ],
  ] as const)("refuses %s", (_name, offers, over, reason, quoted) => {
    const admission = admit([...offers], request(over), policy);
    expect(admission).toMatchObject({ ok: false, reason });
    // An offer was chosen before a later rule refused it: the quote is still streamed.
    expect(admission.ok === false && admission.chosen !== undefined).toBe(quoted);
  });

  it("checks the price shown before the time left, and the time before the limits", () => {
    const all = request({
      shownUsd: "0.20",
      timeLeftMs: 0,
      committed: { today: 10n * USD, thisRequest: 0n },
    });
    expect(admit([offer()], all, policy)).toMatchObject({ reason: "price_changed" });
    expect(admit([offer()], { ...all, shownUsd: "0.25" }, policy)).toMatchObject({
      reason: "too_little_time",
    });
    expect(admit([offer()], { ...all, shownUsd: "0.25", timeLeftMs: 5_000 }, policy)).toMatchObject({
      reason: "limit_exceeded",
      details: { limit: "daily", remainingUsd: "0.00" },
    });
  });

  it("admits exactly up to each limit, and leaves the amounts to the reservation when nothing was read", () => {
    const committed = { today: 9_750_000n, thisRequest: 1_750_000n };
    expect(admit([offer()], request({ committed }), policy)).toMatchObject({ ok: true });
    expect(
      admit([offer()], request({ committed: { ...committed, today: committed.today + 1n } }), policy),
    ).toMatchObject({
      ok: false,
      details: { limit: "daily" },
    });
    expect(admit([offer({ amount: "1000001" })], request(), policy)).toMatchObject({ ok: true });
  });

  it("names who signs: the server's key when one may sign and the price is within approvalAbove", () => {
    const threshold = { ...limits, approvalAbove: 250_000n };
    expect(admit([offer()], request({ limits: threshold }), policy)).toMatchObject({
      ok: true,
      payer: { by: "server" },
    });
    expect(admit([offer({ amount: "250001" })], request({ limits: threshold }), policy)).toMatchObject({
      ok: true,
      payer: { by: "wallet", because: "above_approval" },
    });
    expect(admit([offer()], request({ serverKey: false }), policy)).toMatchObject({
      ok: true,
      payer: { by: "wallet", because: "no_server_key" },
    });
    // Refused: nobody signs.
    expect(admit([offer()], request({ timeLeftMs: 0 }), policy)).not.toHaveProperty("payer");
  });

  it("asks the wallet for want of a key before the threshold, and never lets a key sign above it", () => {
    expect(payerFor(2n, { approvalAbove: 1n }, false)).toEqual({ by: "wallet", because: "no_server_key" });
    expect(payerFor(2n, { approvalAbove: 1n }, true)).toEqual({ by: "wallet", because: "above_approval" });
    expect(payerFor(1n, { approvalAbove: 1n }, true)).toEqual({ by: "server" });
    expect(payerFor(10n ** 30n, {}, true)).toEqual({ by: "server" });
    expect(payerFor(0n, { approvalAbove: 0n }, true)).toEqual({ by: "server" });
  });
});
