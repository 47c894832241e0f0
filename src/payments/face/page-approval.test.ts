import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ToyAuthorization } from "../../chains/testing/index.js";
import { AppError } from "../../errors/index.js";
import type { ValidatedApproval, Wallet } from "../../protocol/index.js";
import { MemoryDeliveredData } from "../../store/memory/index.js";
import type { StoredApproval } from "../ports/index.js";
import { createToyWorld, type ToyWorld } from "../testing/index.js";
import { PageApprovals } from "./page-approval.js";

/**
 * The approval page's way in (unit: the toy world): the chat's checks but the caller's, delivery,
 * the service's answer kept for the payment's caller and never handed to the page, replays.
 */

let w: ToyWorld;
let delivered: MemoryDeliveredData;
let page: PageApprovals;
beforeEach(() => {
  w = createToyWorld();
  delivered = new MemoryDeliveredData();
  page = new PageApprovals({
    ledger: w.ledger,
    desk: w.desk,
    delivered,
    chains: w.chains,
    now: w.clock.date,
  });
});
afterEach(() => w.close());

/** A payment asked for by the bearer identity "alice" from the user's wallet: it waits. */
async function ask(): Promise<{ paymentId: string; authorization: ToyAuthorization }> {
  const outcome = await w.pipeline.pay(w.request({ wallet: w.user, caller: "alice" }), { url: w.url });
  expect(outcome.status).toBe("awaiting_approval");
  const stored = (await w.ledger.get(outcome.paymentId ?? ""))?.approval as StoredApproval;
  if (stored.sign.kind !== "evm-typed-data") throw new Error("not typed data");
  return {
    paymentId: outcome.paymentId ?? "",
    authorization: stored.sign.typedData.message as unknown as ToyAuthorization,
  };
}

const signed = (asked: { paymentId: string; authorization: ToyAuthorization }): ValidatedApproval => ({
  paymentId: asked.paymentId,
  kind: "signature",
  signature: w.chain.sign(asked.authorization),
});

const answer = (a: ValidatedApproval, wallet?: Wallet) =>
  page.answer({ answer: a, ...(wallet ? { wallet } : {}), signal: new AbortController().signal });

async function refusedWith(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof AppError)) throw new Error(`expected an AppError, got ${String(error)}`);
  return error.code;
}

describe("the approval page", () => {
  it("shows what the wallet is asked to sign, in words and numbers", async () => {
    const asked = await ask();
    const view = await page.view(asked.paymentId);
    expect(view).toMatchObject({
      paymentId: asked.paymentId,
      status: "awaiting_approval",
      amount: { atomic: w.service.offer.price.toString() },
      payTo: w.payee,
      service: { url: w.url },
      wallet: w.user.address,
      approval: { wallet: w.user.address, sign: { kind: "evm-typed-data" } },
    });
    expect(view?.expiresAt).toEqual(expect.any(String));
    expect(await page.view("pay_00000000-0000-4000-8000-000000000000")).toBeUndefined();
  });

  // A black-box review (h32): the page, which anyone with its URL reads, showed a key the
  // service's URL carried, though the audit trail and the logs masked it.
  it("masks a key the service's URL carries", async () => {
    const url = `${w.url}?api_key=abcdef0123456789&city=Paris`;
    const outcome = await w.pipeline.pay(w.request({ wallet: w.user, caller: "alice" }), { url });
    const view = await page.view(outcome.paymentId ?? "");
    expect(view?.service.url).toBe(`${w.url}?api_key=[redacted]&city=Paris`);
  });

  it("settles with the wallet's own signature, bound to no caller; the data is kept for the caller only", async () => {
    const asked = await ask();
    const outcome = await answer(signed(asked), w.user);
    expect(outcome).toMatchObject({ paymentId: asked.paymentId, status: "settled", replayed: false });
    expect(outcome.transaction).toEqual(expect.any(String));
    expect(JSON.stringify(outcome)).not.toContain("untrusted");
    expect(w.chain.transactions()).toEqual([
      expect.objectContaining({ payer: w.user.address, amount: w.service.offer.price }),
    ]);
    expect(await page.kept(asked.paymentId)).toMatchObject({ untrusted: true, body: expect.anything() });
    expect((await page.view(asked.paymentId))?.approval).toBeUndefined();
  });

  // A black-box review (h30): the page checked the server's default limits, not those the payment
  // was asked under, so a $2.50 payment asked within a request's $5 could never be approved there.
  it("holds the payment to the limits the request asked with, not the server's defaults", async () => {
    const USD = 1_000_000n;
    w.service.offer.price = (5n * USD) / 2n;
    const within = { perTransaction: 5n * USD, perRequest: 5n * USD };
    const pay = (spendingLimits: typeof within) =>
      w.pipeline.pay(w.request({ wallet: w.user, caller: "alice", spendingLimits }), { url: w.url });
    const raised = await pay(within);
    expect(raised.status).toBe("awaiting_approval");
    const askedOf = async (paymentId: string) => {
      const stored = (await w.ledger.get(paymentId))?.approval as StoredApproval;
      if (stored.sign.kind !== "evm-typed-data") throw new Error("not typed data");
      return { paymentId, authorization: stored.sign.typedData.message as unknown as ToyAuthorization };
    };
    const outcome = await answer(signed(await askedOf(raised.paymentId ?? "")), w.user);
    expect(outcome).toMatchObject({ status: "settled" });

    expect(w.chain.transactions()).toEqual([expect.objectContaining({ amount: (5n * USD) / 2n })]);
  });

  it("replays the same answer (hex case aside) and never pays twice; another answer is used", async () => {
    const asked = await ask();
    const first = signed(asked);
    await answer(first);
    if (first.kind !== "signature") throw new Error("unreachable");
    const again = await answer({
      ...first,
      signature: first.signature.toUpperCase().replace("0X", "0x") as `0x${string}`,
    });
    expect(again).toMatchObject({ status: "settled", replayed: true });
    expect(w.chain.transactions()).toHaveLength(1);
    expect(await refusedWith(answer({ ...first, signature: `0x${"11".repeat(65)}` }))).toBe("approval_used");
    expect(w.chain.transactions()).toHaveLength(1);
  });

  it("the same answer twice at once pays once; the one that lost the race replays the payment", async () => {
    const asked = await ask();
    const [a, b] = await Promise.all([answer(signed(asked)), answer(signed(asked))]);
    expect(w.chain.transactions()).toHaveLength(1);
    expect([a.replayed, b.replayed].sort()).toEqual([false, true]);
    expect(a.paymentId).toBe(b.paymentId);
  });

  it("the loser of a race replays even when it reads before the winner has kept its answer", async () => {
    const asked = await ask();
    // The winner's keep waits until the loser has been refused by the desk and read once.
    let release = () => {};
    const gate = new Promise<void>((r) => {
      release = r;
    });
    let reached = () => {};
    const keeping = new Promise<void>((r) => {
      reached = r;
    });
    const slow: MemoryDeliveredData = Object.assign(Object.create(delivered), {
      keep: async (entry: Parameters<MemoryDeliveredData["keep"]>[0]) => {
        reached(); // the winner has reserved: its keep comes after the desk's approve
        await gate;
        return delivered.keep(entry);
      },
    });
    let pauses = 0;
    const racing = new PageApprovals({
      ledger: w.ledger,
      desk: w.desk,
      delivered: slow,
      chains: w.chains,
      now: w.clock.date,
      pause: async () => {
        pauses++;
        release();
        await Promise.resolve();
      },
    });
    const go = () => racing.answer({ answer: signed(asked), signal: new AbortController().signal });
    const winner = go();
    await keeping;
    const loser = await go();
    expect(loser).toMatchObject({ paymentId: asked.paymentId, replayed: true });
    expect(pauses).toBeGreaterThan(0);
    expect(await winner).toMatchObject({ status: "settled", replayed: false });
    expect(w.chain.transactions()).toHaveLength(1);
    // A different answer still is approval_used at once.
    const other = { ...signed(asked), signature: `0x${"11".repeat(65)}` as const };
    expect(await refusedWith(racing.answer({ answer: other, signal: new AbortController().signal }))).toBe(
      "approval_used",
    );
  });

  it("an approval URL alone pays nothing: a signature not by the wallet, or over other terms, is refused", async () => {
    const asked = await ask();
    const other = w.chain.sign({
      ...asked.authorization,
      value: String(BigInt(asked.authorization.value) + 1n),
    });
    expect(
      await refusedWith(answer({ paymentId: asked.paymentId, kind: "signature", signature: other })),
    ).toBe("approval_invalid");
    expect(
      await refusedWith(
        answer({ paymentId: asked.paymentId, kind: "signature", signature: `0x${"22".repeat(65)}` }),
      ),
    ).toBe("approval_invalid");
    expect(await refusedWith(answer(signed(asked), w.held))).toBe("approval_wrong_wallet");
    expect(w.chain.transactions()).toEqual([]);
    expect((await w.ledger.get(asked.paymentId))?.status).toBe("awaiting_approval");
  });

  it("cannot decline where the chain cannot check a decline's signature: the payment keeps waiting", async () => {
    const asked = await ask();
    expect((await page.view(asked.paymentId))?.decline).toBeUndefined();
    expect(await refusedWith(answer({ paymentId: asked.paymentId, kind: "reject" }))).toBe(
      "approval_invalid",
    );
    expect((await w.ledger.get(asked.paymentId))?.status).toBe("awaiting_approval");
  });

  it("refuses an unknown payment, and one whose window has passed", async () => {
    expect(
      await refusedWith(answer({ paymentId: "pay_00000000-0000-4000-8000-000000000000", kind: "reject" })),
    ).toBe("approval_not_found");
    const asked = await ask();
    w.clock.advance(10 * 60_000);
    expect((await page.view(asked.paymentId))?.status).toBe("expired");
    expect(await refusedWith(answer(signed(asked)))).toBe("approval_expired");
    expect(w.chain.transactions()).toEqual([]);
  });
});

// Found by a black-box run: the page offered to sign a payment whose key had been revoked, then
// refused the signature (403 key_revoked).
describe("a payment whose key ended", () => {
  it("is shown without the approval to sign", async () => {
    let ended: "revoked" | undefined;
    const withKeys = new PageApprovals({
      ledger: w.ledger,
      desk: w.desk,
      delivered,
      chains: w.chains,
      now: w.clock.date,
      pauses: { keyEnded: (caller) => (caller === "alice" ? ended : undefined) },
    });
    const { paymentId } = await ask();
    expect(await withKeys.view(paymentId)).toHaveProperty("approval");
    ended = "revoked";
    const view = await withKeys.view(paymentId);
    expect(view).toMatchObject({ status: "awaiting_approval" });
    expect(view).not.toHaveProperty("approval");
  });
});
