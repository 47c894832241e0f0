import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  DuplicatePaymentError,
  type Ledger,
  type LedgerReads,
  PaymentNotFoundError,
  SameTransactionError,
} from "../../payments/ports/index.js";
import { IllegalTransitionError } from "../../payments/rules/index.js";
import type { Store } from "../index.js";
import { at, newWallet, payment, roomy, T0, USD } from "./fixtures.js";
import { describeIdempotencyKeys } from "./idempotency-suite.js";
import { describeLedgerCallerCap } from "./ledger-caller-suite.js";
import { describeLedgerLimits } from "./ledger-limits-suite.js";
import { describeStoredText } from "./ledger-text-suite.js";
import { describeLedgerTotals } from "./ledger-totals-suite.js";

/**
 * The ledger's behaviour, written once and run against every backend (PGlite, PostgreSQL server,
 * memory). Each test works on its own wallet and request ids, so one store serves the whole suite.
 * Its parts: this file (a payment's record, its transitions and listings), the limits
 * (ledger-limits-suite.ts), an operator's key's daily cap (ledger-caller-suite.ts), the running totals (ledger-totals-suite.ts) and the idempotency keys
 * (idempotency-suite.ts).
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

    describeLedgerLimits(() => store);
    describeLedgerTotals(() => store);
    describeLedgerCallerCap(() => store);

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

    it("refuses a duplicate payment id with DuplicatePaymentError, reserved or awaiting approval", async () => {
      const wallet = newWallet();
      const input = payment({ wallet });
      await ledger.reserve(input);
      await expect(ledger.reserve({ ...input })).rejects.toBeInstanceOf(DuplicatePaymentError);
      const awaiting = { ...input, caller: null, approval: {}, expiresAt: at(60) };
      await expect(ledger.recordAwaiting(awaiting)).rejects.toBeInstanceOf(DuplicatePaymentError);
      expect((await reads.spending(wallet, T0)).today).toBe(USD);
    });

    // A black-box review (h30): the second call for one quote id, weighed against the limits the
    // first one's payment filled, was told "refused: limit_exceeded" for a payment that was made.
    it("knows a duplicate id as such even when the limits it would meet are full", async () => {
      const wallet = newWallet();
      const input = payment({ wallet, limits: { perTransaction: USD, perRequest: USD, daily: USD } });
      await ledger.reserve(input);
      await expect(ledger.reserve({ ...input })).rejects.toBeInstanceOf(DuplicatePaymentError);
    });

    // Found by a black-box run: a seller's fixed memo made two payments one Solana transaction.
    it("refuses a second payment holding the same signed Solana transaction, reserved or approved", async () => {
      const wallet = newWallet();
      const svm = (messageHash: string) => ({
        authorization: { kind: "svm-exact", messageHash, blockhash: "b", expiresAt: "1", signedAt: "0" },
      });
      const hash = `m_${randomUUID()}`;
      const first = payment({ wallet, intent: svm(hash) });
      expect((await ledger.reserve(first)).ok).toBe(true);
      const second = payment({ wallet, intent: svm(hash) });
      await expect(ledger.reserve(second)).rejects.toBeInstanceOf(SameTransactionError);
      expect(await ledger.get(second.paymentId)).toBeUndefined();
      // Signed anew (another message), it is reserved; an EVM authorization is never compared.
      expect((await ledger.reserve({ ...second, intent: svm(`m_${randomUUID()}`) })).ok).toBe(true);
      const evm = { authorization: { kind: "evm-eip3009", from: wallet, nonce: "0x1", validBefore: "9" } };
      expect((await ledger.reserve(payment({ wallet, intent: evm }))).ok).toBe(true);
      expect((await ledger.reserve(payment({ wallet, intent: evm }))).ok).toBe(true);
      // An approval whose wallet signed the same transaction is refused too, and keeps waiting.
      const { limits: _l, ...facts } = payment({ wallet });
      await ledger.recordAwaiting({ ...facts, caller: null, approval: {}, expiresAt: at(60) });
      await expect(
        ledger.approve({ paymentId: facts.paymentId, limits: roomy, ...svm(hash), now: T0 }),
      ).rejects.toBeInstanceOf(SameTransactionError);
      expect((await ledger.get(facts.paymentId))?.status).toBe("awaiting_approval");
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
    describeStoredText(() => store);
  });
}
