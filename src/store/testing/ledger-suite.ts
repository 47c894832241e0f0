import { randomUUID } from "node:crypto";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  DAILY_WINDOW_MS,
  DAILY_WINDOW_SLACK_MS,
  type Ledger,
  type LedgerReads,
  PaymentNotFoundError,
  type PaymentRecord,
} from "../../payments/ports/index.js";
import { IllegalTransitionError, LEDGER_STATUSES } from "../../payments/rules/index.js";
import type { Store } from "../index.js";
import { at, HOUR, newWallet, payment, roomy, T0, USD } from "./fixtures.js";
import { describeIdempotencyKeys } from "./idempotency-suite.js";

/**
 * The ledger's behaviour, written once and run against every backend (PGlite, PostgreSQL server).
 * Each test works on its own wallet and request ids, so one store serves the whole suite.
 */

/** Register the suite for one backend. `open` is called once; the store is closed after. */
export function describeLedger(
  name: string,
  open: () => Promise<Store>,
  cleanup?: () => Promise<void>,
): void {
  describe(`ledger on ${name}`, () => {
    let store: Store;
    let ledger: Ledger;
    /** The read side (what a wallet has spent), a port of its own: no payment step reads it. */
    let reads: LedgerReads;
    let idempotency: Store["idempotency"];

    beforeAll(async () => {
      store = await open();
      ledger = store.ledger;
      reads = store.ledger;
      idempotency = store.idempotency;
    });
    afterAll(async () => {
      await store?.close();
      await cleanup?.();
    });

    it("reserves a payment and keeps every field", async () => {
      const wallet = newWallet();
      const input = payment({ wallet, amount: 12_345n });
      const result = await ledger.reserve(input);
      expect(result.ok).toBe(true);
      const record = await ledger.get(input.paymentId);
      expect(record).toMatchObject({
        paymentId: input.paymentId,
        status: "reserved",
        history: [{ status: "reserved", at: T0.toISOString() }],
        wallet,
        scopeId: input.scopeId,
        service: input.service,
        network: input.network,
        asset: input.asset,
        payTo: input.payTo,
        amount: 12_345n,
        requirement: input.requirement,
        txHash: null,
        payer: null,
        error: null,
        authorization: null,
        settledAt: null,
      });
      expect(record?.createdAt.getTime()).toBe(T0.getTime());
      expect(await ledger.get("pay_missing")).toBeUndefined();
    });

    it("reserves with the intent to send in one write: born submitted, with its authorization and history", async () => {
      const wallet = newWallet();
      const authorization = { kind: "evm-eip3009", from: wallet, nonce: "0x01", validBefore: "9" };
      const result = await ledger.reserve(payment({ wallet, intent: { authorization } }));
      if (!result.ok) throw new Error("refused");
      expect(result.payment.status).toBe("submitted");
      expect(result.payment.authorization).toEqual(authorization);
      expect(result.payment.history.map((h) => h.status)).toEqual(["reserved", "signed", "submitted"]);
      expect((await reads.spending(wallet, T0)).pending).toBe(USD);
      // The limits hold for it exactly as for a plain reservation: nothing is written when refused.
      const over = await ledger.reserve(
        payment({ wallet, intent: { authorization }, limits: { ...roomy, daily: USD + 1n } }),
      );
      expect(over.ok).toBe(false);
      expect((await reads.spending(wallet, T0)).today).toBe(USD);
      await ledger.transition(result.payment.paymentId, "settled", { txHash: "0xabc" }, T0);
      expect((await ledger.get(result.payment.paymentId))?.status).toBe("settled");
    });

    it("keeps amounts beyond 64 bits exact", async () => {
      const wallet = newWallet();
      const huge = 10n ** 30n + 7n;
      const limits = { perTransaction: huge, perRequest: huge, daily: 2n * huge };
      const input = payment({ wallet, amount: huge, limits });
      expect((await ledger.reserve(input)).ok).toBe(true);
      expect((await ledger.get(input.paymentId))?.amount).toBe(huge);
      expect((await reads.spending(wallet, T0)).today).toBe(huge);
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
        expect((await ledger.reserve(payment({ wallet: w, limits, amount: 1n, now: almost }))).ok).toBe(
          false,
        );
        const freed = new Date(made.getTime() + 24 * HOUR + DAILY_WINDOW_SLACK_MS);
        expect((await reads.spending(w, freed)).today).toBe(0n);
      }
    });

    it("keeps what it counts equal to the sum over the payments, after any sequence of concurrent reserves, approvals and moves", async () => {
      const span = 3 * HOUR;
      const command = fc.oneof(
        fc.record({
          kind: fc.constant("reserve" as const),
          request: fc.nat(2),
          amount: fc.bigInt(1n, 4n * USD),
          intent: fc.boolean(),
          tight: fc.boolean(),
          at: fc.nat(span),
        }),
        fc.record({
          kind: fc.constant("await" as const),
          request: fc.nat(2),
          amount: fc.bigInt(1n, 4n * USD),
          at: fc.nat(span),
        }),
        fc.record({ kind: fc.constant("approve" as const), pick: fc.nat(), tight: fc.boolean() }),
        fc.record({
          kind: fc.constant("move" as const),
          pick: fc.nat(),
          to: fc.constantFrom(...LEDGER_STATUSES),
        }),
      );
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.array(command, { minLength: 1, maxLength: 6 }), { maxLength: 6 }),
          async (batches) => {
            const wallet = newWallet();
            const requests = [0, 1, 2].map(() => `req_${randomUUID()}`);
            const ids: string[] = [];
            const tight = { perTransaction: 4n * USD, perRequest: 6n * USD, daily: 10n * USD };
            for (const batch of batches) {
              const known = [...ids];
              const run = async (c: (typeof batch)[number]): Promise<unknown> => {
                if (c.kind === "reserve" || c.kind === "await") {
                  const input = payment({
                    wallet,
                    scopeId: requests[c.request] ?? "",
                    amount: c.amount,
                    now: at(c.at),
                    ...(c.kind === "reserve" && c.tight ? { limits: tight } : {}),
                    ...(c.kind === "reserve" && c.intent
                      ? { intent: { authorization: { nonce: "0x01" } } }
                      : {}),
                  });
                  ids.push(input.paymentId);
                  if (c.kind === "reserve") return ledger.reserve(input);
                  const { limits: _limits, ...facts } = input;
                  return ledger.recordAwaiting({
                    ...facts,
                    caller: null,
                    approval: {},
                    expiresAt: at(span + HOUR),
                  });
                }
                const id = known[c.pick % Math.max(known.length, 1)];
                if (!id) return undefined;
                if (c.kind === "approve") {
                  return ledger.approve({
                    paymentId: id,
                    limits: c.tight ? tight : roomy,
                    authorization: {},
                    now: at(span),
                  });
                }
                return ledger.transition(id, c.to, {}, at(span));
              };
              const outcomes = await Promise.allSettled(batch.map(run));
              for (const o of outcomes) {
                if (
                  o.status === "rejected" &&
                  !(o.reason instanceof IllegalTransitionError || o.reason instanceof PaymentNotFoundError)
                )
                  throw o.reason;
              }
            }
            // The rows as the ledger holds them, summed here by status (state.ts decides what counts).
            const rows = (await Promise.all(ids.map((id) => ledger.get(id)))).filter((r) => r !== undefined);
            const sum = (keep: (r: PaymentRecord) => boolean, statuses: readonly string[]) =>
              rows.filter((r) => keep(r) && statuses.includes(r.status)).reduce((t, r) => t + r.amount, 0n);
            const pending = ["reserved", "signed", "submitted"];
            const spent = ["settled", "unknown"];
            const inDay = (since: number) => (r: PaymentRecord) => r.createdAt.getTime() > since;
            for (const scopeId of requests) {
              const ofRequest = (r: PaymentRecord) => r.scopeId === scopeId;
              // Every row within the day: exactly the sums.
              const now = at(span + HOUR);
              expect(await ledger.budget(wallet, scopeId, now)).toEqual({
                daySpent: sum(inDay(-Infinity), spent),
                dayPending: sum(inDay(-Infinity), pending),
                requestSpent: sum(ofRequest, spent),
                requestPending: sum(ofRequest, pending),
              });
              // The day's edge among the rows: at least the rows after it, at most those within the slack.
              const later = at(24 * HOUR + span / 2);
              const since = later.getTime() - DAILY_WINDOW_MS;
              const edge = await ledger.budget(wallet, scopeId, later);
              for (const [field, statuses] of [
                ["daySpent", spent],
                ["dayPending", pending],
              ] as const) {
                expect(edge[field]).toBeGreaterThanOrEqual(sum(inDay(since), statuses));
                expect(edge[field]).toBeLessThanOrEqual(sum(inDay(since - DAILY_WINDOW_SLACK_MS), statuses));
              }
              expect(edge.requestSpent).toBe(sum(ofRequest, spent));
              expect(edge.requestPending).toBe(sum(ofRequest, pending));
            }
            expect(await reads.spending(wallet, at(span + HOUR))).toEqual({
              settled: sum(inDay(-Infinity), ["settled"]),
              pending: sum(inDay(-Infinity), pending),
              unknown: sum(inDay(-Infinity), ["unknown"]),
              today: sum(inDay(-Infinity), [...pending, ...spent]),
            });
          },
        ),
        { numRuns: 15 },
      );
    });

    it("records the status history and settlement facts", async () => {
      const wallet = newWallet();
      const input = payment({ wallet });
      await ledger.reserve(input);
      const authorization = { nonce: "0x01", validBefore: "1772366460" };
      await ledger.transition(input.paymentId, "signed", { authorization }, at(10));
      await ledger.transition(input.paymentId, "submitted", {}, at(20));
      await ledger.transition(input.paymentId, "settled", { txHash: "0xfeed", payer: wallet }, at(30));
      const settled = await ledger.get(input.paymentId);
      expect(settled).toMatchObject({
        status: "settled",
        txHash: "0xfeed",
        payer: wallet,
        authorization,
        history: [
          { status: "reserved", at: T0.toISOString() },
          { status: "signed", at: at(10).toISOString() },
          { status: "submitted", at: at(20).toISOString() },
          { status: "settled", at: at(30).toISOString(), txHash: "0xfeed", payer: wallet },
        ],
      });
      expect(settled?.settledAt?.getTime()).toBe(at(30).getTime());
      expect(settled?.updatedAt.getTime()).toBe(at(30).getTime());
      expect(await reads.spending(wallet, at(40))).toMatchObject({ settled: USD, today: USD });
    });

    it("throws on illegal transitions and unknown ids, leaving the row untouched", async () => {
      const input = payment({ wallet: newWallet() });
      await ledger.reserve(input);
      await expect(ledger.transition(input.paymentId, "settled", {}, at(1))).rejects.toThrow(
        IllegalTransitionError,
      );
      await ledger.transition(input.paymentId, "released", {}, at(2));
      await expect(ledger.transition(input.paymentId, "signed", {}, at(3))).rejects.toThrow(
        IllegalTransitionError,
      );
      await expect(ledger.transition(input.paymentId, "reserved", {}, at(3))).rejects.toThrow(
        /released -> reserved/,
      );
      expect((await ledger.get(input.paymentId))?.history.map((h) => h.status)).toEqual([
        "reserved",
        "released",
      ]);
      await expect(ledger.transition("pay_missing", "signed", {}, at(4))).rejects.toThrow(
        PaymentNotFoundError,
      );
    });

    it("lets exactly one of concurrent transitions of one payment win", async () => {
      const input = payment({ wallet: newWallet() });
      await ledger.reserve(input);
      const outcomes = await Promise.allSettled(
        Array.from({ length: 10 }, (_, i) =>
          ledger.transition(input.paymentId, i % 2 ? "signed" : "released", {}, at(i)),
        ),
      );
      expect(outcomes.filter((o) => o.status === "fulfilled")).toHaveLength(1);
      expect((await ledger.get(input.paymentId))?.history).toHaveLength(2);
    });

    it("waits for approval holding no budget; approving reserves against the limits as they are, once", async () => {
      const wallet = newWallet();
      const asked = payment({ wallet, amount: 3n * USD });
      const { limits: _limits, ...facts } = asked;
      await ledger.recordAwaiting({ ...facts, caller: null, approval: { sign: "x" }, expiresAt: at(60) });
      expect((await reads.spending(wallet, T0)).today).toBe(0n);
      const tight = { perTransaction: 10n * USD, perRequest: 10n * USD, daily: 4n * USD };
      // Something else spends 2 of the 4 meanwhile: the approval no longer fits.
      await ledger.reserve(payment({ wallet, amount: 2n * USD }));
      const refused = await ledger.approve({
        paymentId: asked.paymentId,
        limits: tight,
        authorization: {},
        now: at(1),
      });
      expect(refused).toMatchObject({ ok: false, limit: "daily", remainingAtomic: 2n * USD });
      expect((await ledger.get(asked.paymentId))?.status).toBe("awaiting_approval");
      const results = await Promise.all(
        Array.from({ length: 4 }, () =>
          ledger.approve({
            paymentId: asked.paymentId,
            limits: roomy,
            authorization: { k: "v" },
            now: at(2),
          }),
        ),
      );
      expect(results.filter((r) => r.ok)).toHaveLength(1);
      expect(
        results.filter((r) => !r.ok && "notAwaiting" in r && r.notAwaiting === "submitted"),
      ).toHaveLength(3);
      const row = await ledger.get(asked.paymentId);
      expect(row?.history.map((h) => h.status)).toEqual([
        "awaiting_approval",
        "reserved",
        "signed",
        "submitted",
      ]);
      expect((await reads.spending(wallet, T0)).today).toBe(5n * USD);
      // A step decided on an older status does not apply to the newer one.
      await expect(
        ledger.transition(asked.paymentId, "rejected", {}, at(3), "awaiting_approval"),
      ).rejects.toThrow(IllegalTransitionError);
      expect((await ledger.get(asked.paymentId))?.status).toBe("submitted");
      // Past its expiry an approval is refused, whatever the limits.
      const late = payment({ wallet: newWallet() });
      const { limits: _l, ...lateFacts } = late;
      await ledger.recordAwaiting({ ...lateFacts, caller: null, approval: {}, expiresAt: at(5) });
      expect(
        await ledger.approve({ paymentId: late.paymentId, limits: roomy, authorization: {}, now: at(6) }),
      ).toEqual({ ok: false, notAwaiting: "expired" });
    });

    it("refuses a duplicate payment id", async () => {
      const wallet = newWallet();
      const input = payment({ wallet });
      await ledger.reserve(input);
      await expect(ledger.reserve({ ...input })).rejects.toThrow(/already exists/);
      expect((await reads.spending(wallet, T0)).today).toBe(USD);
    });

    it("lists payments by status and by request, oldest first", async () => {
      const wallet = newWallet();
      const scopeId = `req_${randomUUID()}`;
      const a = payment({ wallet, scopeId, now: at(1) });
      const b = payment({ wallet, scopeId, now: at(2) });
      await ledger.reserve(b);
      await ledger.reserve(a);
      await ledger.transition(b.paymentId, "signed", {}, at(3));
      await ledger.transition(b.paymentId, "unknown", {}, at(4));
      expect((await ledger.listByScope(scopeId)).map((p) => p.paymentId)).toEqual([a.paymentId, b.paymentId]);
      const unknown = await ledger.listByStatus(["unknown"]);
      expect(unknown.map((p) => p.paymentId)).toContain(b.paymentId);
      expect(unknown.every((p) => p.status === "unknown")).toBe(true);
      expect(await ledger.listByStatus([])).toEqual([]);
    });

    describeIdempotencyKeys(() => idempotency);
  });
}
