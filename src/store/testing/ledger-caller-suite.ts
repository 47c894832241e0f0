import { randomUUID } from "node:crypto";
import { beforeAll, expect, it } from "vitest";
import { DAILY_WINDOW_SLACK_MS, type Ledger, type ReserveInput } from "../../payments/ports/index.js";
import type { Store } from "../index.js";
import { at, HOUR, newWallet, payment, roomy, T0, USD } from "./fixtures.js";

/**
 * Part of the ledger contract (ledger-suite.ts): an operator's key's daily cap (`callerDaily`,
 * docs/payments.md#spending-limits) counts what its caller committed in the rolling 24 h over every wallet,
 * checked under the caller's lock with the reservation, so payments at once on many wallets never
 * together pass it; an approval is held to it as a reservation is.
 */
export function describeLedgerCallerCap(store: () => Store): void {
  let ledger: Ledger;
  // The store opens in describeLedger's beforeAll, registered (and so run) before this one.
  beforeAll(() => {
    ledger = store().ledger;
  });

  const CENT = USD / 100n;
  const newKey = () => `key_${randomUUID()}`;
  /** Roomy per-wallet limits, and the key's cap. */
  const capped = (callerDaily: bigint) => ({ ...roomy, callerDaily });
  const keyed = (caller: string, wallet: string, callerDaily: bigint, over: Partial<ReserveInput> = {}) =>
    payment({ wallet, caller, amount: CENT, limits: capped(callerDaily), ...over });

  it("counts the key's payments over every wallet: two $0.01 on two wallets fill a $0.02 day", async () => {
    const key = newKey();
    const [a, b] = [newWallet(), newWallet()];
    expect(await ledger.reserve(keyed(key, a, 2n * CENT))).toMatchObject({
      ok: true,
      budget: { callerSpent: 0n, callerPending: 0n },
    });
    expect((await ledger.reserve(keyed(key, b, 2n * CENT))).ok).toBe(true);
    const third = keyed(key, a, 2n * CENT);
    expect(await ledger.reserve(third)).toEqual({
      ok: false,
      limit: "daily",
      limitAtomic: 2n * CENT,
      remainingAtomic: 0n,
      amountAtomic: CENT,
      budget: {
        daySpent: 0n,
        dayPending: CENT,
        requestSpent: 0n,
        requestPending: 0n,
        callerSpent: 0n,
        callerPending: 2n * CENT,
      },
    });
    expect(await ledger.get(third.paymentId)).toBeUndefined();
    // Another key, and the same wallets without a key, are not held to it.
    expect((await ledger.reserve(keyed(newKey(), a, 2n * CENT))).ok).toBe(true);
    expect((await ledger.reserve(payment({ wallet: b, amount: CENT }))).ok).toBe(true);
  });

  it("N payments at once for one key across two wallets never pass its daily cap", async () => {
    const key = newKey();
    const wallets = [newWallet(), newWallet()];
    const results = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        ledger.reserve(keyed(key, wallets[i % 2] ?? "", 7n * USD, { amount: USD })),
      ),
    );
    expect(results.filter((r) => r.ok)).toHaveLength(7);
    for (const r of results.filter((r) => !r.ok)) {
      expect(r).toMatchObject({ limit: "daily", limitAtomic: 7n * USD, remainingAtomic: 0n });
    }
    const day = await ledger.budget(wallets[0] ?? "", "none", T0, key);
    expect(day.callerPending).toBe(7n * USD);
    expect(day.callerSpent).toBe(0n);
  });

  it("frees the key's day as the wallet's: released frees, unknown and settled count, 24 h on it is free", async () => {
    const key = newKey();
    const [a, b] = [newWallet(), newWallet()];
    const sent = { authorization: { nonce: "0x01" } };
    const first = keyed(key, a, 2n * CENT);
    const second = keyed(key, b, 2n * CENT, { intent: sent });
    for (const p of [first, second]) expect((await ledger.reserve(p)).ok).toBe(true);
    await ledger.transition(first.paymentId, "released", {}, at(1000));
    const third = keyed(key, b, 2n * CENT, { intent: sent, now: at(2000) });
    expect((await ledger.reserve(third)).ok).toBe(true);
    await ledger.transition(second.paymentId, "settled", { txHash: "0x01" }, at(3000));
    await ledger.transition(third.paymentId, "unknown", { error: "timeout after send" }, at(3000));
    expect(await ledger.budget(a, "none", at(4000), key)).toMatchObject({
      daySpent: 0n,
      callerSpent: 2n * CENT,
      callerPending: 0n,
    });
    expect((await ledger.reserve(keyed(key, a, 2n * CENT, { now: at(5000) }))).ok).toBe(false);
    const freed = at(24 * HOUR + DAILY_WINDOW_SLACK_MS + 2000);
    expect((await ledger.reserve(keyed(key, a, 2n * CENT, { now: freed }))).ok).toBe(true);
  });

  it("holds an approval to the key's cap, counted by the caller who asked for it", async () => {
    const key = newKey();
    const [a, b] = [newWallet(), newWallet()];
    const asked = keyed(key, a, 2n * CENT);
    const { limits: _limits, caller: _caller, ...facts } = asked;
    await ledger.recordAwaiting({ ...facts, caller: key, approval: {}, expiresAt: at(HOUR) });
    expect((await ledger.reserve(keyed(key, b, 2n * CENT, { amount: 2n * CENT }))).ok).toBe(true);
    const approve = { paymentId: asked.paymentId, authorization: {}, now: at(1000) };
    expect(await ledger.approve({ ...approve, limits: capped(2n * CENT) })).toEqual({
      ok: false,
      limit: "daily",
      limitAtomic: 2n * CENT,
      remainingAtomic: 0n,
      amountAtomic: CENT,
    });
    expect((await ledger.get(asked.paymentId))?.status).toBe("awaiting_approval");
    // A larger cap lets it through, and it counts for the key from then on.
    expect(await ledger.approve({ ...approve, limits: capped(3n * CENT) })).toMatchObject({ ok: true });
    expect(await ledger.budget(a, "none", at(2000), key)).toMatchObject({ callerPending: 3n * CENT });
  });

  it("reads no caller's day without a caller; a cap without a caller counts nothing", async () => {
    const wallet = newWallet();
    const budget = await ledger.budget(wallet, "none", T0);
    expect(budget).toEqual({ daySpent: 0n, dayPending: 0n, requestSpent: 0n, requestPending: 0n });
    const anonymous = payment({ wallet, amount: CENT, limits: capped(0n) });
    expect(await ledger.reserve(anonymous)).toMatchObject({ ok: true });
  });
}
