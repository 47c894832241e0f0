import { describe, expect, it } from "vitest";
import { approvalOverLimit, checkApproval, type EffectiveLimits, type StoredPayment } from "./index.js";

/**
 * A stored approval against the limits in force when the wallet answers (pure): the allow-lists,
 * then the amount limits, in the order and words of a payment's own refusals.
 */

const USD = 1_000_000n;
const payment: StoredPayment = {
  paymentId: "pay_1",
  wallet: "0x000000000000000000000000000000000000a11c",
  network: "eip155:84532",
  service: "https://a.example/data",
  amount: 250_000n,
};
const limits: EffectiveLimits = {
  perTransaction: USD,
  perRequest: 2n * USD,
  daily: 10n * USD,
  allowedNetworks: ["eip155:84532"],
  allowedServices: "any",
};
const nothing = { today: 0n, thisRequest: 0n };

describe("a stored approval against the limits in force", () => {
  it("still fits: up to each limit exactly", () => {
    expect(checkApproval(payment, limits, nothing)).toEqual({ ok: true });
    expect(checkApproval(payment, limits, { today: 9_750_000n, thisRequest: 1_750_000n })).toEqual({
      ok: true,
    });
    expect(checkApproval(payment, { ...limits, allowedServices: ["https://a.example"] }, nothing)).toEqual({
      ok: true,
    });
  });

  it("refuses a network the limits no longer allow", () => {
    expect(checkApproval(payment, { ...limits, allowedNetworks: ["eip155:8453"] }, nothing)).toEqual({
      ok: false,
      reason: "limit_exceeded",
      message: "Paying $0.25 to https://a.example/data on Base Sepolia is no longer allowed by your limits.",
      details: { paymentId: "pay_1", priceUsd: "0.25", limit: "allowedNetworks", network: "eip155:84532" },
    });
  });

  it("refuses a service the limits no longer allow", () => {
    expect(checkApproval(payment, { ...limits, allowedServices: ["https://b.example"] }, nothing)).toEqual({
      ok: false,
      reason: "limit_exceeded",
      message: "Paying $0.25 to https://a.example/data is no longer allowed by your limits.",
      details: {
        paymentId: "pay_1",
        priceUsd: "0.25",
        limit: "allowedServices",
        service: "https://a.example/data",
      },
    });
  });

  it.each([
    ["perTransaction", { ...limits, perTransaction: 249_999n }, nothing, "0.249999"],
    ["perRequest", limits, { today: 0n, thisRequest: 1_750_001n }, "0.249999"],
    ["daily", limits, { today: 9_750_001n, thisRequest: 0n }, "0.249999"],
  ] as const)("refuses over the %s limit as it stands", (limit, now, committed, remainingUsd) => {
    expect(checkApproval(payment, now, committed)).toMatchObject({
      ok: false,
      reason: "limit_exceeded",
      details: { paymentId: "pay_1", priceUsd: "0.25", limit, remainingUsd },
    });
  });

  it("checks the allow-lists before the amounts, the network before the service", () => {
    const closed = { ...limits, allowedNetworks: [], allowedServices: [], daily: 0n };
    expect(checkApproval(payment, closed, nothing)).toMatchObject({ details: { limit: "allowedNetworks" } });
    expect(
      checkApproval(payment, { ...closed, allowedNetworks: limits.allowedNetworks }, nothing),
    ).toMatchObject({
      details: { limit: "allowedServices" },
    });
  });

  it("words an amount refusal as a payment's: which limit, its size, what is left", () => {
    const refusal = { limit: "daily", limitAtomic: 10n * USD, remainingAtomic: 100_000n } as const;
    expect(approvalOverLimit(payment, refusal)).toEqual({
      ok: false,
      reason: "limit_exceeded",
      message:
        "Paying $0.25 to https://a.example/data would exceed the daily limit of $10.00 ($0.10 left in the last 24 h).",
      details: {
        paymentId: "pay_1",
        priceUsd: "0.25",
        limit: "daily",
        limitUsd: "10.00",
        remainingUsd: "0.10",
      },
    });
  });
});
