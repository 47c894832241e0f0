import { randomUUID } from "node:crypto";
import { beforeAll, expect, it } from "vitest";
import { DAILY_WINDOW_SLACK_MS, type Ledger, type LedgerReads } from "../../payments/ports/index.js";
import type { Store } from "../index.js";
import { at, HOUR, newWallet, payment, roomy, T0, USD } from "./fixtures.js";

/**
 * Part of the ledger contract (ledger-suite.ts): the limits a reservation is checked against
 * (per transaction, per request, the rolling day, under concurrency) and the budget it reports.
 */
export function describeLedgerLimits(store: () => Store): void {
  let ledger: Ledger;
  let reads: LedgerReads;
  // The store opens in describeLedger's beforeAll, registered (and so run) before this one.
  beforeAll(() => {
    ledger = store().ledger;
    reads = store().ledger;
  });

  it("grants exactly N of many concurrent reservations against a daily limit", async () => {
    const wallet = newWallet();
    const limits = { ...roomy, daily: 7n * USD };
    const results = await Promise.all(
      Array.from({ length: 30 }, () => ledger.reserve(payment({ wallet, limits, amount: USD }))),
    );
    expect(results.filter((r) => r.ok)).toHaveLength(7);
    for (const r of results.filter((r) => !r.ok)) {
      expect(r).toMatchObject({
        limit: "daily",
        limitAtomic: 7n * USD,
        remainingAtomic: 0n,
        amountAtomic: USD,
      });
    }
    const spent = await reads.spending(wallet, T0);
    expect(spent).toEqual({ settled: 0n, pending: 7n * USD, unknown: 0n, today: 7n * USD });
  });

  it("grants exactly N of concurrent reservations of one request against its per-request limit", async () => {
    const wallet = newWallet();
    const scopeId = `req_${randomUUID()}`;
    const limits = { ...roomy, perRequest: 3n * USD };
    const results = await Promise.all(
      Array.from({ length: 20 }, () => ledger.reserve(payment({ wallet, scopeId, limits }))),
    );
    expect(results.filter((r) => r.ok)).toHaveLength(3);
    const rows = await ledger.listByScope(scopeId);
    expect(rows).toHaveLength(3);
    expect(rows.reduce((sum, p) => sum + p.amount, 0n)).toBeLessThanOrEqual(3n * USD);
  });

  it("refuses a payment above the per-transaction limit and records nothing", async () => {
    const wallet = newWallet();
    const input = payment({ wallet, amount: 2n * USD, limits: { ...roomy, perTransaction: USD } });
    expect(await ledger.reserve(input)).toEqual({
      ok: false,
      limit: "perTransaction",
      limitAtomic: USD,
      remainingAtomic: USD,
      amountAtomic: 2n * USD,
      budget: { daySpent: 0n, dayPending: 0n, requestSpent: 0n, requestPending: 0n },
    });
    expect(await ledger.get(input.paymentId)).toBeUndefined();
  });

  it("returns the budget it reserved against, split into spent and pending, as budget() reads it", async () => {
    const wallet = newWallet();
    const scopeId = `req_${randomUUID()}`;
    const sent = { authorization: { nonce: "0x01" } };
    const settled = payment({ wallet, scopeId, amount: 3n * USD, intent: sent });
    const unclear = payment({ wallet, amount: 2n * USD, intent: sent });
    const pending = payment({ wallet, scopeId, amount: USD });
    const released = payment({ wallet, scopeId, amount: 7n * USD });
    for (const p of [settled, unclear, pending, released]) expect((await ledger.reserve(p)).ok).toBe(true);
    await ledger.transition(settled.paymentId, "settled", { txHash: "0x01" }, T0);
    await ledger.transition(unclear.paymentId, "unknown", { error: "timeout after send" }, T0);
    await ledger.transition(released.paymentId, "released", {}, T0);
    const expected = { daySpent: 5n * USD, dayPending: USD, requestSpent: 3n * USD, requestPending: USD };
    expect(await ledger.budget(wallet, scopeId, T0)).toEqual(expected);

    // The sums are those before this payment, whether it is reserved or refused.
    const next = await ledger.reserve(payment({ wallet, scopeId, amount: USD }));
    expect(next).toMatchObject({ ok: true, budget: expected });
    const refused = await ledger.reserve(
      payment({ wallet, scopeId, amount: USD, limits: { ...roomy, perRequest: 5n * USD } }),
    );
    expect(refused).toMatchObject({
      ok: false,
      limit: "perRequest",
      budget: { ...expected, requestPending: 2n * USD, dayPending: 2n * USD },
    });
  });

  it("refuses what would pass the per-request limit, naming what remains", async () => {
    const wallet = newWallet();
    const scopeId = `req_${randomUUID()}`;
    const limits = { ...roomy, perRequest: 2n * USD };
    expect((await ledger.reserve(payment({ wallet, scopeId, limits, amount: (3n * USD) / 2n }))).ok).toBe(
      true,
    );
    expect(await ledger.reserve(payment({ wallet, scopeId, limits, amount: USD }))).toMatchObject({
      ok: false,
      limit: "perRequest",
      remainingAtomic: USD / 2n,
    });
    // Another request of the same wallet has its own per-request budget.
    expect((await ledger.reserve(payment({ wallet, limits, amount: USD }))).ok).toBe(true);
  });

  it("frees the budget for released and failed payments, but not for unknown ones", async () => {
    const wallet = newWallet();
    const limits = { ...roomy, daily: 2n * USD };
    const a = payment({ wallet, limits });
    const b = payment({ wallet, limits });
    expect((await ledger.reserve(a)).ok).toBe(true);
    expect((await ledger.reserve(b)).ok).toBe(true);
    expect((await ledger.reserve(payment({ wallet, limits }))).ok).toBe(false);

    await ledger.transition(a.paymentId, "released", {}, at(1000));
    const c = payment({ wallet, limits });
    expect((await ledger.reserve(c)).ok).toBe(true);

    await ledger.transition(c.paymentId, "signed", {}, at(2000));
    await ledger.transition(c.paymentId, "failed", { error: "facilitator refused" }, at(3000));
    const d = payment({ wallet, limits });
    expect((await ledger.reserve(d)).ok).toBe(true);

    await ledger.transition(d.paymentId, "signed", {}, at(4000));
    await ledger.transition(d.paymentId, "unknown", { error: "timeout after send" }, at(5000));
    expect((await ledger.reserve(payment({ wallet, limits }))).ok).toBe(false);
    expect(await reads.spending(wallet, at(6000))).toEqual({
      settled: 0n,
      pending: USD,
      unknown: USD,
      today: 2n * USD,
    });
  });

  it("counts spend in a rolling 24 h window: at least 24 h, freed within the slack after", async () => {
    const wallet = newWallet();
    const limits = { ...roomy, daily: 5n * USD };
    const first = payment({ wallet, limits, amount: 5n * USD, now: T0 });
    expect((await ledger.reserve(first)).ok).toBe(true);
    await ledger.transition(first.paymentId, "signed", {}, T0);
    await ledger.transition(first.paymentId, "submitted", {}, T0);
    await ledger.transition(first.paymentId, "settled", { txHash: "0xabc" }, T0);

    const almost = at(24 * HOUR - 1);
    expect(await ledger.reserve(payment({ wallet, limits, amount: 1n, now: almost }))).toMatchObject({
      ok: false,
      limit: "daily",
      remainingAtomic: 0n,
    });
    expect((await reads.spending(wallet, almost)).settled).toBe(5n * USD);

    const freed = at(24 * HOUR + DAILY_WINDOW_SLACK_MS);
    expect(await reads.spending(wallet, freed)).toEqual({
      settled: 0n,
      pending: 0n,
      unknown: 0n,
      today: 0n,
    });
    expect((await ledger.reserve(payment({ wallet, limits, amount: 5n * USD, now: freed }))).ok).toBe(true);
  });

  it("never counts a payment for less than 24 h, wherever in a minute or bucket it was made", async () => {
    const wallet = newWallet();
    const limits = { ...roomy, daily: USD };
    // Reserved just before, at and just after possible bucket edges.
    for (const offset of [-1, 0, 1, 59_999, 60_000, DAILY_WINDOW_SLACK_MS - 1, DAILY_WINDOW_SLACK_MS]) {
      const w = `${wallet}_${offset}`;
      const made = at(offset);
      expect((await ledger.reserve(payment({ wallet: w, limits, now: made }))).ok).toBe(true);
      const almost = new Date(made.getTime() + 24 * HOUR - 1);
      expect((await reads.spending(w, almost)).pending).toBe(USD);
      expect((await ledger.reserve(payment({ wallet: w, limits, amount: 1n, now: almost }))).ok).toBe(false);
      const freed = new Date(made.getTime() + 24 * HOUR + DAILY_WINDOW_SLACK_MS);
      expect((await reads.spending(w, freed)).today).toBe(0n);
    }
  });
}
