import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ToyAuthorization } from "../../chains/testing/index.js";
import { AppError } from "../../errors/index.js";
import type { SpendingLimitsInput, ValidatedApproval } from "../../protocol/index.js";
import type { StoredApproval } from "../ports/index.js";
import { createToyWorld, RecordingObserver, type ToyWorld, USD } from "../testing/index.js";

/**
 * ApprovalDesk (unit: the memory ledger and the toy chain): a payment the user's own wallet signs
 * waits, holds no budget, and is paid only when an answer passes every check, once.
 */

let w: ToyWorld;
beforeEach(() => {
  w = createToyWorld();
});
afterEach(() => w.close());

/** Ask for a payment from the user's wallet (no held key): it waits for approval. */
async function ask(): Promise<{ paymentId: string; authorization: ToyAuthorization }> {
  const outcome = await w.pipeline.pay(w.request({ wallet: w.user }), { url: w.url });
  expect(outcome.status).toBe("awaiting_approval");
  const row = await w.ledger.get(outcome.paymentId ?? "");
  const stored = row?.approval as StoredApproval;
  if (stored.sign.kind !== "evm-typed-data") throw new Error("not typed data");
  return {
    paymentId: outcome.paymentId ?? "",
    authorization: stored.sign.typedData.message as unknown as ToyAuthorization,
  };
}

/** What the user's wallet answers: its signature over what it was asked to sign. */
const signed = (asked: { paymentId: string; authorization: ToyAuthorization }): ValidatedApproval => ({
  paymentId: asked.paymentId,
  kind: "signature",
  signature: w.chain.sign(asked.authorization),
});

function resume(
  answer: ValidatedApproval,
  over: { spendingLimits?: SpendingLimitsInput; wallet?: typeof w.user } = {},
) {
  return w.desk.resume({
    answer,
    wallet: over.wallet ?? w.user,
    signal: new AbortController().signal,
    ...(over.spendingLimits ? { spendingLimits: over.spendingLimits } : {}),
  });
}

async function refusedWith(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof AppError)) throw new Error(`expected an AppError, got ${String(error)}`);
  return error.code;
}

describe("approval in the user's wallet", () => {
  it("waits holding no budget, then pays once when the wallet signs what it was asked", async () => {
    const asked = await ask();
    expect((await w.memory.spending(w.user.address, w.clock.date())).today).toBe(0n);
    expect(w.chain.transactions()).toEqual([]);

    const resumed = await resume(signed(asked));
    const observer = new RecordingObserver();
    const outcome = await resumed.run(observer);
    expect(outcome).toMatchObject({ status: "paid", paymentId: asked.paymentId });
    expect(observer.statuses()).toEqual(["reserved", "signed", "submitted", "settled"]);
    expect(w.chain.transactions()).toEqual([
      expect.objectContaining({ payer: w.user.address, amount: w.service.offer.price }),
    ]);
    // Used: the same answer again pays nothing more.
    expect(await refusedWith(resume(signed(asked)))).toBe("approval_used");
    expect(w.chain.transactions()).toHaveLength(1);
  });

  it("paused by the operator: the signed answer is not submitted, the payment keeps waiting", async () => {
    let paused = true;
    w.close();
    w = createToyWorld({
      pauses: {
        pausedFor: () => (paused ? { scope: "all", key: null, reason: "incident 9" } : undefined),
      },
    });
    // While paused the wallet is not asked to sign what would be refused once signed.
    const refused = await w.pipeline.pay(w.request({ wallet: w.user }), { url: w.url });
    expect(refused).toMatchObject({ status: "refused", error: { reason: "payments_paused" } });
    paused = false;
    const asked = await ask();
    paused = true;
    const error = await resume(signed(asked)).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).code).toBe("payments_paused");
    expect((error as AppError).message).toContain("incident 9");
    expect(w.chain.transactions()).toEqual([]);
    expect((await w.ledger.get(asked.paymentId))?.status).toBe("awaiting_approval");
    expect(w.events.events.filter((e) => e.kind === "refused_early")).toMatchObject([
      { reason: "payments_paused", wallet: w.user.address, service: w.url },
    ]);
    paused = false;
    const outcome = await (await resume(signed(asked))).run(new RecordingObserver());
    expect(outcome.status).toBe("paid");
  });

  // Found by a black-box run (h48): an approval whose reservation waited on the wallet's lock was
  // sent after the pause had answered. The switch is read again once it is reserved.
  it("paused while the approval was reserved: dropped unsent, its row failed, 403 payments_paused", async () => {
    let paused = false;
    w.close();
    w = createToyWorld({
      pauses: { pausedFor: () => (paused ? { scope: "all", key: null, reason: "incident 10" } : undefined) },
      ledger: (memory) =>
        Object.assign(Object.create(memory) as typeof memory, {
          approve: async (...args: Parameters<typeof memory.approve>) => {
            const reserved = await memory.approve(...args);
            paused = true; // the operator paused while the reservation waited
            return reserved;
          },
        }),
    });
    const asked = await ask();
    const before = w.events.events.length;
    const late = await resume(signed(asked)).then(
      () => undefined,
      (e: unknown) => e as AppError,
    );
    expect(late?.code).toBe("payments_paused");
    expect(late?.message).toContain("The signed payment was not sent; nothing was paid.");
    expect(w.chain.transactions()).toEqual([]);
    expect(await w.ledger.get(asked.paymentId)).toMatchObject({ status: "failed", error: "payments_paused" });
    // The trail hears it failed, never a refusal that "keeps waiting" (h53).
    expect(w.events.events.slice(before).filter((e) => e.kind === "refused_early")).toEqual([]);
    expect((await w.memory.spending(w.user.address, w.clock.date())).today).toBe(0n);
  });

  it("asked for by an operator key since revoked: the page's answer is refused, nothing sent", async () => {
    let ended: "revoked" | "expired" | undefined;
    w.close();
    w = createToyWorld({
      pauses: { pausedFor: () => undefined, keyEnded: (caller) => (caller === "k1" ? ended : undefined) },
    });
    const outcome = await w.pipeline.pay(w.request({ wallet: w.user, caller: "k1" }), { url: w.url });
    expect(outcome.status).toBe("awaiting_approval");
    const row = await w.ledger.get(outcome.paymentId ?? "");
    const stored = row?.approval as StoredApproval;
    if (stored.sign.kind !== "evm-typed-data") throw new Error("not typed data");
    const asked = {
      paymentId: outcome.paymentId ?? "",
      authorization: stored.sign.typedData.message as unknown as ToyAuthorization,
    };
    ended = "revoked";
    const answer = { answer: signed(asked), wallet: w.user, via: "page" as const };
    const before = w.events.events.length;
    const error = await w.desk.resume({ ...answer, signal: new AbortController().signal }).then(
      () => undefined,
      (e: unknown) => e,
    );
    // The trail hears the refusal after the wallet's approval (found by a review: it heard only that).
    const told = w.events.events.slice(before);
    expect(told.map((e) => e.kind)).toEqual(["approval_answered", "refused_early"]);
    expect(told[1]).toMatchObject({ reason: "key_ended" });
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).code).toBe("payment_unavailable");
    expect((error as AppError).message).toContain("revoked");
    expect(w.chain.transactions()).toEqual([]);
    expect((await w.ledger.get(asked.paymentId))?.status).toBe("awaiting_approval");
    // Another key's payments, and a key in force, are approved as ever.
    ended = undefined;
    const resumed = await w.desk.resume({ ...answer, signal: new AbortController().signal });
    expect((await resumed.run(new RecordingObserver())).status).toBe("paid");
  });

  it("declined: nothing is paid, ever, with this payment", async () => {
    const asked = await ask();
    const outcome = await (await resume({ paymentId: asked.paymentId, kind: "reject" })).run(
      new RecordingObserver(),
    );
    expect(outcome.status).toBe("rejected");
    expect((await w.ledger.get(asked.paymentId))?.status).toBe("rejected");
    expect(await refusedWith(resume(signed(asked)))).toBe("approval_used");
    expect(w.chain.transactions()).toEqual([]);
  });

  it.each([
    [
      "no such payment",
      (a: { paymentId: string }) => ({ ...a, paymentId: "pay_missing" }),
      "approval_not_found",
    ],
    [
      "a signature over other terms",
      (a: { paymentId: string; authorization: ToyAuthorization }) => ({
        ...a,
        authorization: { ...a.authorization, value: "1" },
      }),
      "approval_invalid",
    ],
  ] as const)("refuses %s, and the payment keeps waiting", async (_name, change, code) => {
    const asked = await ask();
    expect(await refusedWith(resume(signed(change(asked) as typeof asked)))).toBe(code);
    expect((await w.ledger.get(asked.paymentId))?.status).toBe("awaiting_approval");
    expect(w.chain.transactions()).toEqual([]);
  });

  it("refuses an answer from another wallet", async () => {
    const asked = await ask();
    expect(await refusedWith(resume(signed(asked), { wallet: w.held }))).toBe("approval_wrong_wallet");
  });

  it("refuses an answer after the window, and the payment is expired", async () => {
    const asked = await ask();
    w.clock.advance(10 * 60_000);
    expect(await refusedWith(resume(signed(asked)))).toBe("approval_expired");
    expect((await w.ledger.get(asked.paymentId))?.status).toBe("expired");
    expect(w.chain.transactions()).toEqual([]);
  });

  it("never pays a changed price: the payment fails and the wallet's signature is not used", async () => {
    const asked = await ask();
    w.service.offer.price = 20_000n;
    expect(await refusedWith(resume(signed(asked)))).toBe("price_changed");
    expect((await w.ledger.get(asked.paymentId))?.status).toBe("failed");
    expect(w.chain.transactions()).toEqual([]);
  });

  it("checks the limits as they are when the answer comes, and the balance", async () => {
    const asked = await ask();
    expect(await refusedWith(resume(signed(asked), { spendingLimits: { perTransaction: 1n } }))).toBe(
      "limit_exceeded",
    );
    w.chain.mint(w.service.offer.asset, w.user.address, -100n * USD);
    expect(await refusedWith(resume(signed(asked)))).toBe("insufficient_balance");
    expect((await w.ledger.get(asked.paymentId))?.status).toBe("awaiting_approval");
    // Each refusal is told as a chat's is (the audit trail's refusals, the metrics), not only the
    // wallet's approval (found by a black-box run: "approved", then nothing).
    const told = w.events.events.flatMap((e) => (e.kind === "refused_early" ? [e.reason] : []));
    expect(told).toEqual(["limit_exceeded", "insufficient_balance"]);
  });

  it("a reservation made meanwhile may use the budget: the approval is refused, nothing paid", async () => {
    const asked = await ask();
    const limits = { perTransaction: 1n * USD, perRequest: 1n * USD, daily: w.service.offer.price };
    // Another payment of the same wallet takes the whole daily limit before the answer comes.
    const row = await w.ledger.get(asked.paymentId);
    if (!row) throw new Error("no row");
    const { paymentId: _id, scopeId: _req, ...facts } = row;
    const other = {
      ...facts,
      paymentId: "pay_meanwhile",
      scopeId: "req_other",
      limits,
      now: w.clock.date(),
    };
    expect((await w.ledger.reserve(other)).ok).toBe(true);
    expect(await refusedWith(resume(signed(asked), { spendingLimits: { daily: limits.daily } }))).toBe(
      "limit_exceeded",
    );
    expect(w.chain.transactions()).toEqual([]);
  });

  it("of two answers racing, exactly one pays", async () => {
    const asked = await ask();
    const results = await Promise.allSettled([resume(signed(asked)), resume(signed(asked))]);
    const won = results.filter((r) => r.status === "fulfilled");
    expect(won).toHaveLength(1);
    const lost = results.find((r) => r.status === "rejected");
    expect((lost as PromiseRejectedResult).reason).toMatchObject({ code: "approval_used" });
    const outcome = await (won[0] as PromiseFulfilledResult<Awaited<ReturnType<typeof resume>>>).value.run(
      new RecordingObserver(),
    );
    expect(outcome.status).toBe("paid");
    expect(w.chain.transactions()).toHaveLength(1);
  });
});
