import { randomUUID } from "node:crypto";
import type { ReserveInput } from "../../payments/ports/index.js";
import type { AmountLimits } from "../../payments/rules/index.js";

/** What the store suites share: amounts, a fixed clock, roomy limits and a payment to reserve. */

export const USD = 1_000_000n;
export const HOUR = 60 * 60 * 1000;
export const T0 = new Date("2026-03-01T12:00:00.000Z");
export const at = (ms: number) => new Date(T0.getTime() + ms);
export const roomy: AmountLimits = { perTransaction: 100n * USD, perRequest: 100n * USD, daily: 1000n * USD };

export function payment(over: Partial<ReserveInput> & { wallet: string }): ReserveInput {
  return {
    paymentId: `pay_${randomUUID()}`,
    scopeId: `req_${randomUUID()}`,
    service: "https://weather.example/paris",
    network: "eip155:31337",
    asset: "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
    payTo: "0x000000000000000000000000000000000000dEaD",
    amount: USD,
    requirement: { scheme: "exact", network: "eip155:31337", amount: "1000000", maxTimeoutSeconds: 60 },
    limits: roomy,
    now: T0,
    ...over,
  };
}

export const newWallet = () => `0xwallet_${randomUUID()}`;
