import { afterEach, describe, expect, it, vi } from "vitest";
import type { ToyAuthorization } from "../chains/testing/index.js";
import { fanOut } from "../payments/index.js";
import type { StoredApproval } from "../payments/ports/index.js";
import { createToyWorld, type ToyWorld, USD } from "../payments/testing/index.js";
import {
  type AuditEntry,
  type AuditRecord,
  type AuditRow,
  type AuditStore,
  auditPaymentEvents,
  createAuditLog,
  MemoryAuditStore,
} from "./index.js";

/**
 * The audit trail in memory (unit): what each payment event and operator action becomes, the
 * queue that keeps records in order off the payment's path (and through a database that fails),
 * and the chain's check naming the first record changed, removed or reordered.
 */

const T = new Date("2026-03-01T12:00:00.000Z");
const entry = (n: number, kind = "payment.quoted"): AuditEntry => ({
  at: new Date(T.getTime() + n * 1000),
  kind,
  requestId: `req_${n}`,
  data: { n },
});

let w: ToyWorld | undefined;
afterEach(() => w?.close());

describe("payment events as audit records", () => {
  it("a paid payment: quoted, reserved, signed (a hash), submitted, settled, with caller and request", async () => {
    const store = new MemoryAuditStore();
    const log = createAuditLog({ store });
    w = createToyWorld({ price: USD / 2n, events: fanOut(auditPaymentEvents(log)) });
    const request = w.request({ caller: "ops-key" });
    const outcome = await w.pipeline.pay(request, { url: w.url });
    expect(outcome.status).toBe("paid");
    await log.flush();
    const kinds = store.records.map((r) => r.kind);
    expect(kinds).toEqual([
      "payment.quoted",
      "payment.reserved",
      "payment.signed",
      "payment.submitted",
      "payment.settled",
    ]);
    for (const r of store.records) {
      expect(r).toMatchObject({
        caller: "ops-key",
        requestId: request.scopeId,
        paymentId: outcome.paymentId,
      });
    }
    const [quoted, , signed, , settled] = store.records as AuditRecord[];
    expect(quoted?.data).toMatchObject({
      amountUsd: "0.50",
      amountAtomic: "500000",
      wallet: w.held.address,
      limits: { perTransaction: "1.00", perRequest: "2.00", daily: "10.00" },
    });
    expect(signed?.data.signatureHash).toMatch(/^[0-9a-f]{64}$/);
    expect(settled?.data.txHash).toBe(outcome.transaction);
    expect(await log.verify()).toMatchObject({ ok: true, records: 5 });
  });

  it("refusals, early ones too, are listed newest first; answers and reconciling carry the payment's caller", async () => {
    const store = new MemoryAuditStore();
    const log = createAuditLog({ store });
    w = createToyWorld({ events: auditPaymentEvents(log) });
    await w.pipeline.pay(w.request({ wallet: undefined, caller: "k1" }), { url: w.url });
    w.clock.advance(1000);
    w.service.offer.price = 3n * USD;
    await w.pipeline.pay(w.request({ caller: "k2" }), { url: w.url });
    w.service.offer.price = USD / 10n;
    const asked = await w.pipeline.pay(w.request({ wallet: w.user, caller: "k3" }), { url: w.url });
    await w.desk.resume({
      answer: { paymentId: asked.paymentId ?? "", kind: "reject" },
      wallet: w.user,
      caller: "k3",
      signal: new AbortController().signal,
    });
    await log.flush();
    const refusals = await log.refusals(10);
    expect(refusals).toEqual([
      expect.objectContaining({ caller: "k2", reason: "limit_exceeded", service: w.url, amountUsd: "3.00" }),
      expect.objectContaining({ caller: "k1", reason: "no_wallet", service: null, amountUsd: null }),
    ]);
    const answered = store.records.find((r) => r.kind === "approval.answered");
    expect(answered).toMatchObject({
      caller: "k3",
      paymentId: asked.paymentId,
      data: { via: "caller", wallet: w.user.address, answer: "declined" },
    });
  });

  // A black-box review (h31): a URL's credentials and key-like query values went into the
  // hash-chained trail, which cannot be scrubbed afterwards.
  it("a refused URL's credentials and key-like query values are masked in the trail", async () => {
    const store = new MemoryAuditStore();
    const log = createAuditLog({ store });
    w = createToyWorld({ events: auditPaymentEvents(log) });
    const url = "https://alice:hunter2@api.example.com/data?api_key=abcdef0123456789&city=Paris";
    // The toy service answers any URL: paid once, then refused over the limit.
    expect((await w.pipeline.pay(w.request({ caller: "k1" }), { url })).status).toBe("paid");
    w.service.offer.price = 3n * USD;
    expect((await w.pipeline.pay(w.request({ caller: "k1" }), { url })).status).toBe("refused");
    await log.flush();
    expect(store.records.map((r) => r.kind)).toContain("payment.settled");
    const trail = JSON.stringify(store.records);
    expect(trail).not.toMatch(/hunter2|abcdef0123456789/);
    expect(await log.refusals(1)).toEqual([
      expect.objectContaining({
        service: "https://[redacted]@api.example.com/data?api_key=[redacted]&city=Paris",
      }),
    ]);
  });

  it("an approved payment a limit then refuses: its refusal names the payment and its amount", async () => {
    const store = new MemoryAuditStore();
    const log = createAuditLog({ store });
    w = createToyWorld({ events: auditPaymentEvents(log) });
    w.service.offer.price = USD / 10n;
    const asked = await w.pipeline.pay(w.request({ wallet: w.user, caller: "k4" }), { url: w.url });
    const paymentId = asked.paymentId ?? "";
    const row = await w.ledger.get(paymentId);
    const sign = (row?.approval as StoredApproval | undefined)?.sign;
    if (!sign) throw new Error("no stored approval");
    if (sign.kind !== "evm-typed-data") throw new Error("not typed data");
    const signature = w.chain.sign(sign.typedData.message as unknown as ToyAuthorization);
    const refused = await w.desk
      .resume({
        answer: { paymentId, kind: "signature", signature },
        wallet: w.user,
        caller: "k4",
        signal: new AbortController().signal,
        spendingLimits: { perTransaction: USD / 20n },
      })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(refused).toMatchObject({ code: "limit_exceeded" });
    await log.flush();
    expect(await log.refusals(1)).toEqual([
      expect.objectContaining({ caller: "k4", reason: "limit_exceeded", amountUsd: "0.10" }),
    ]);
    expect(store.records.find((r) => r.kind === "payment.refused")).toMatchObject({
      paymentId,
      data: { waiting: true, amountAtomic: String(USD / 10n), payTo: w.service.offer.payTo },
    });
  });

  // Found by a black-box run: a payment sent by an instance since killed was reconciled by another,
  // and its record named no caller.
  it("a reconciled payment is recorded with the caller and request its row names", async () => {
    const store = new MemoryAuditStore();
    const log = createAuditLog({ store });
    auditPaymentEvents(log).emit({
      kind: "reconciled",
      at: new Date(),
      paymentId: "pay_r",
      from: "submitted",
      to: "settled",
      txHash: "0xabc",
      payment: { network: "eip155:84532", amount: USD, caller: "ci", scopeId: "req_r" },
    });
    await log.flush();
    expect(store.records.find((r) => r.kind === "payment.reconciled")).toMatchObject({
      caller: "ci",
      requestId: "req_r",
      paymentId: "pay_r",
      data: { by: "reconciler", from: "submitted", to: "settled", txHash: "0xabc" },
    });
  });

  it("an operator action: the operator as caller, the key's name, and nothing else it carries", async () => {
    const store = new MemoryAuditStore();
    const log = createAuditLog({ store });
    const action = {
      kind: "key.rotated" as const,
      at: T,
      by: "cli",
      key: "partner-a",
      token: "x402_secret_token",
    };
    log.appendControl(action);
    log.appendControl({
      kind: "pause.set",
      at: T.toISOString(),
      by: "ops",
      scope: "all",
      reason: "incident",
    });
    await log.flush();
    expect(store.records.map(({ kind, caller, data }) => ({ kind, caller, data }))).toEqual([
      { kind: "key.rotated", caller: "cli", data: { key: "partner-a" } },
      { kind: "pause.set", caller: "ops", data: { scope: "all", reason: "incident" } },
    ]);
    expect(JSON.stringify(store.records)).not.toContain("x402_secret_token");
  });
});

/** A store that refuses while `down`, counting the calls. */
class FlakyStore implements AuditStore {
  down = true;
  readonly inner = new MemoryAuditStore();
  async append(rows: readonly AuditRow[]): Promise<void> {
    if (this.down) throw new Error("database away");
    await this.inner.append(rows);
  }
  read = (q: Parameters<AuditStore["read"]>[0]) => this.inner.read(q);
  latest = (kinds: readonly string[], limit: number) => this.inner.latest(kinds, limit);
  seqOfHash = (hash: string) => this.inner.seqOfHash(hash);
}

describe("the queue", () => {
  it("appends never throw or wait; records written in order once the database is back", async () => {
    const store = new FlakyStore();
    const errors: string[] = [];
    const log = createAuditLog({ store, retryMs: 60_000, onError: (_e, context) => errors.push(context) });
    for (let i = 1; i <= 5; i++) log.append(entry(i));
    await expect(log.flush()).rejects.toThrow("database away");
    expect(errors.length).toBeGreaterThan(0);
    store.down = false;
    log.append(entry(6));
    await log.flush();
    expect(store.inner.records.map((r) => r.data.n)).toEqual([1, 2, 3, 4, 5, 6]);
    await log.close();
  });

  it("past its bound it drops the oldest, and a record says how many", async () => {
    const store = new FlakyStore();
    const log = createAuditLog({ store, maxQueued: 3, retryMs: 60_000 });
    for (let i = 1; i <= 5; i++) log.append(entry(i));
    await expect(log.flush()).rejects.toThrow();
    store.down = false;
    await log.close();
    expect(store.inner.records.map((r) => [r.kind, r.data])).toEqual([
      ["audit.dropped", { count: 2 }],
      ["payment.quoted", { n: 3 }],
      ["payment.quoted", { n: 4 }],
      ["payment.quoted", { n: 5 }],
    ]);
  });

  it("close waits for a store that does not answer only so long, and says what was left", async () => {
    vi.useFakeTimers();
    try {
      const hanging = Object.assign(new FlakyStore(), { append: () => new Promise<void>(() => {}) });
      const errors: string[] = [];
      const log = createAuditLog({ store: hanging, onError: (_e, context) => errors.push(context) });
      log.append(entry(1));
      log.append(entry(2));
      await Promise.resolve();
      log.append(entry(3));
      const closing = log.close();
      await vi.advanceTimersByTimeAsync(5000);
      await closing;
      expect(errors).toEqual(["audit: 3 records not written at close"]);
    } finally {
      vi.useRealTimers();
    }
  });

  it("after close, nothing more is taken (and it says so)", async () => {
    const store = new MemoryAuditStore();
    const errors: string[] = [];
    const log = createAuditLog({ store, onError: (e) => errors.push(String(e)) });
    log.append(entry(1));
    await log.close();
    log.append(entry(2));
    await log.flush();
    expect(store.records).toHaveLength(1);
    expect(errors).toEqual([expect.stringContaining("after close")]);
  });
});

describe("verify", () => {
  async function chain(n: number) {
    const store = new MemoryAuditStore();
    const log = createAuditLog({ store });
    for (let i = 1; i <= n; i++) log.append(entry(i, i === 4 ? "payment.settled" : "payment.quoted"));
    await log.flush();
    return { store, log };
  }

  it("holds for an untouched chain, and for an empty one", async () => {
    const { log, store } = await chain(6);
    expect(await log.verify()).toEqual({
      ok: true,
      records: 6,
      head: { seq: 6, hash: store.records[5]?.hash },
    });
    expect(await createAuditLog({ store: new MemoryAuditStore() }).verify()).toEqual({
      ok: true,
      records: 0,
    });
  });

  it("names a changed record", async () => {
    const { log, store } = await chain(6);
    (store.records[3] as AuditRecord).data = { n: 40 };
    expect(await log.verify()).toEqual({
      ok: false,
      records: 3,
      firstBad: {
        seq: 4,
        problem: "changed",
        kind: "payment.settled",
        at: "2026-03-01T12:00:04.000Z",
        detail: "record 4 (payment.settled at 2026-03-01T12:00:04.000Z) does not match its hash",
      },
    });
  });

  it("names a removed record, the first one included", async () => {
    const { log, store } = await chain(6);
    store.records.splice(2, 1);
    expect(await log.verify()).toMatchObject({
      ok: false,
      records: 2,
      firstBad: { seq: 3, problem: "removed" },
    });
    const first = await chain(3);
    first.store.records.shift();
    for (const r of first.store.records) r.seq -= 1;
    expect(await first.log.verify()).toMatchObject({
      ok: false,
      records: 0,
      firstBad: { seq: 1, problem: "removed" },
    });
  });

  it("names a reordered record", async () => {
    const { log, store } = await chain(6);
    const [a, b] = [store.records[1] as AuditRecord, store.records[2] as AuditRecord];
    [a.seq, b.seq] = [b.seq, a.seq];
    store.records.splice(1, 2, b, a);
    expect(await log.verify()).toMatchObject({
      ok: false,
      records: 1,
      firstBad: { seq: 2, problem: "reordered" },
    });
  });
});
