import { afterEach, describe, expect, it } from "vitest";
import type { ToyAuthorization } from "../../chains/testing/index.js";
import type { PaymentEvent, StoredApproval } from "../ports/index.js";
import { createToyWorld, RecordingObserver, type ToyWorld, USD } from "../testing/index.js";
import { signatureHashOf } from "./events.js";

/**
 * Payment events (unit: the memory ledger and the toy chain, a recording watcher): what the core
 * tells its watchers (the audit trail, metrics) of every step, refusal, approval answer and
 * reconciliation, in order, with no signature in any of it; and a watcher that throws changes
 * nothing about a payment.
 */

let w: ToyWorld;
afterEach(() => w.close());

const stepsOf = (events: PaymentEvent[]) =>
  events.flatMap((e) => (e.kind === "step" ? [e] : [])).map((e) => ({ ...e, at: undefined }));

describe("payment events", () => {
  it("a paid payment tells quoted, reserved, signed, submitted, settled, in order", async () => {
    w = createToyWorld({ price: USD / 2n });
    const request = w.request({ caller: "ops-key" });
    // The signatures the service received (what the events must never carry).
    const sent: string[] = [];
    const submit = w.chain.submit.bind(w.chain);
    w.chain.submit = (asset, authorization, signature) => {
      sent.push(signature);
      return submit(asset, authorization, signature);
    };
    const outcome = await w.pipeline.pay(request, { url: w.url });
    expect(outcome.status).toBe("paid");
    const id = outcome.paymentId ?? "";
    expect(w.events.steps(id)).toEqual(["quoted", "reserved", "signed", "submitted", "settled"]);

    const steps = stepsOf(w.events.events);
    const payment = {
      paymentId: id,
      scopeId: request.scopeId,
      caller: "ops-key",
      wallet: w.held.address,
      service: w.url,
      amount: USD / 2n,
      payTo: w.payee,
    };
    for (const step of steps) expect(step.payment).toMatchObject(payment);
    // The limits in force ride on the admission's steps: quoted and reserved.
    const limits = { perTransaction: 1n * USD, perRequest: 2n * USD, daily: 10n * USD };
    expect(steps.map((s) => s.limits)).toEqual([limits, limits, undefined, undefined, undefined]);
    // The signed step carries a hash of the authorization the intent recorded, never a signature.
    const row = await w.ledger.get(id);
    const authorization = row?.authorization as Record<string, string>;
    expect(steps[2]?.signatureHash).toBe(signatureHashOf(authorization));
    expect(steps[2]?.signatureHash).toMatch(/^[0-9a-f]{64}$/);
    expect(steps.filter((s) => s.signatureHash)).toHaveLength(1);
    expect(steps[4]).toMatchObject({ status: "settled", txHash: row?.txHash });
    const told = JSON.stringify(w.events.events, (_k, v) => (typeof v === "bigint" ? v.toString() : v));
    expect(told).not.toMatch(/signature"/i);
    expect(sent).toHaveLength(1);
    expect(told).not.toContain((sent[0] ?? "").slice(2));
  });

  it("a refusal tells quoted, then refused with its reason and the limits that refused it", async () => {
    w = createToyWorld({ price: 3n * USD });
    const outcome = await w.pipeline.pay(w.request(), { url: w.url });
    expect(outcome).toMatchObject({ status: "refused", error: { reason: "limit_exceeded" } });
    const steps = stepsOf(w.events.events);
    expect(steps.map((s) => s.status)).toEqual(["quoted", "refused"]);
    expect(steps[1]).toMatchObject({
      reason: "limit_exceeded",
      message: expect.stringContaining("$3"),
      limits: { perTransaction: 1n * USD, perRequest: 2n * USD, daily: 10n * USD },
      payment: { amount: 3n * USD, wallet: w.held.address },
    });
  });

  it("a payment refused before it exists tells refused_early", async () => {
    w = createToyWorld();
    const request = w.request({ wallet: undefined, caller: "anon-key" });
    await w.pipeline.pay(request, { url: w.url });
    w.service.down = true;
    await w.pipeline.pay(w.request(), { url: w.url });
    expect(w.events.events.map((e) => ({ ...e, at: undefined }))).toEqual([
      expect.objectContaining({
        kind: "refused_early",
        scopeId: request.scopeId,
        caller: "anon-key",
        reason: "no_wallet",
      }),
      expect.objectContaining({
        kind: "refused_early",
        caller: null,
        wallet: w.held.address,
        service: w.url,
        reason: "service_unavailable",
      }),
    ]);
  });

  /*
   * Found by a black-box run: 60 of 80 client disconnects read as "service_unavailable" refusals in
   * the audit trail and the operator's refusals, though every service was up.
   */
  it("a call cut short because the client left tells no refusal: the service did not fail", async () => {
    w = createToyWorld();
    const left = new AbortController();
    left.abort();
    w.service.down = true; // what the cut call looks like from here: no answer
    const outcome = await w.pipeline.pay(w.request({ signal: left.signal }), { url: w.url });
    expect(outcome).toMatchObject({ error: { reason: "service_unavailable" } });
    await w.pipeline.quote(w.request({ signal: left.signal }), { url: w.url });
    expect(w.events.events).toEqual([]);
  });

  it("a quote admission refuses tells refused_early too (the audit trail lists it)", async () => {
    w = createToyWorld({ price: 3n * USD });
    const request = w.request({ caller: "k" });
    const quoted = await w.pipeline.quote(request, { url: w.url });
    expect(quoted).toMatchObject({ kind: "demand", admission: { ok: false, reason: "limit_exceeded" } });
    expect(w.events.events).toEqual([
      expect.objectContaining({
        kind: "refused_early",
        scopeId: request.scopeId,
        caller: "k",
        service: w.url,
        reason: "limit_exceeded",
      }),
    ]);
  });

  it("the wallet's answers tell approval_answered, via the caller or the page, with its wallet", async () => {
    w = createToyWorld();
    const ask = async () => {
      const outcome = await w.pipeline.pay(w.request({ wallet: w.user }), { url: w.url });
      const row = await w.ledger.get(outcome.paymentId ?? "");
      const stored = row?.approval as StoredApproval;
      if (stored.sign.kind !== "evm-typed-data") throw new Error("not typed data");
      return {
        id: outcome.paymentId ?? "",
        asked: stored.sign.typedData.message as unknown as ToyAuthorization,
      };
    };
    const signal = new AbortController().signal;
    const approved = await ask();
    const answer = {
      paymentId: approved.id,
      kind: "signature" as const,
      signature: w.chain.sign(approved.asked),
    };
    await (await w.desk.resume({ answer, wallet: w.user, signal })).run(new RecordingObserver());
    const declined = await ask();
    // The approval page's way in (its decline's signature is checked before the desk, page-decline.ts).
    const reject = { paymentId: declined.id, kind: "reject" as const };
    await w.desk.resume({ answer: reject, wallet: w.user, via: "page", signal });

    const answers = w.events.events.filter((e) => e.kind === "approval_answered");
    expect(answers).toEqual([
      expect.objectContaining({
        paymentId: approved.id,
        via: "caller",
        wallet: w.user.address,
        answer: "approved",
      }),
      expect.objectContaining({
        paymentId: declined.id,
        via: "page",
        wallet: w.user.address,
        answer: "declined",
      }),
    ]);
    expect(w.events.steps(approved.id)).toEqual([
      "quoted",
      "awaiting_approval",
      "reserved",
      "signed",
      "submitted",
      "settled",
    ]);
    expect(w.events.steps(declined.id)).toEqual(["quoted", "awaiting_approval", "rejected"]);
  });

  it("the reconciler's resolutions tell reconciled, from and to", async () => {
    w = createToyWorld();
    w.service.after = "silent";
    w.chain.landing = "late";
    const outcome = await w.pipeline.pay(w.request(), { url: w.url });
    expect(outcome.status).toBe("unknown");
    w.chain.dropLate();
    w.clock.advance(10 * 60_000);
    await w.reconciler.sweep();
    const reconciled = w.events.events.filter((e) => e.kind === "reconciled");
    expect(reconciled.at(-1)).toMatchObject({ paymentId: outcome.paymentId, from: "unknown", to: "failed" });
  });

  it("a watcher that throws changes nothing: the payment is paid and recorded", async () => {
    w = createToyWorld({
      events: {
        emit() {
          throw new Error("the watcher broke");
        },
      },
    });
    const outcome = await w.pipeline.pay(w.request(), { url: w.url });
    expect(outcome.status).toBe("paid");
    expect((await w.ledger.get(outcome.paymentId ?? ""))?.status).toBe("settled");
    expect(w.errors).toEqual([]);
  });
});
