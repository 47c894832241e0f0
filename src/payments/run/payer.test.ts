import { afterEach, describe, expect, it } from "vitest";
import { createToyWorld, type ToyWorld } from "../testing/index.js";
import type { PaymentRequest } from "./index.js";

/**
 * Who signs (unit: the toy world): admission names a server key or the user's wallet, and a quote
 * and the payment that follows it give the same answer, whichever of the facts decides it.
 */

let w: ToyWorld;
afterEach(() => w.close());

/** What the quote says of the wallet, and what the payment then does, for the same request. */
async function quoteThenPay(over: Partial<PaymentRequest>) {
  const quote = await w.pipeline.quote(w.request(over), { url: w.url });
  const outcome = await w.pipeline.pay(w.request(over), { url: w.url });
  return {
    needsApproval: quote.kind === "demand" ? quote.needsApproval : "no demand",
    payer: quote.kind === "demand" && quote.admission?.ok ? quote.admission.payer : undefined,
    status: outcome.status,
  };
}

describe("who signs, for a quote and its payment alike", () => {
  it("the server's key, for its wallet and token, within approvalAbove", async () => {
    w = createToyWorld({ limits: { approvalAbove: 10_000n } });
    expect(await quoteThenPay({})).toEqual({ needsApproval: false, payer: { by: "server" }, status: "paid" });
    expect(w.chain.transactions()).toHaveLength(1);
  });

  it("the user's wallet, when the server holds no key for it", async () => {
    w = createToyWorld();
    expect(await quoteThenPay({ wallet: w.user })).toEqual({
      needsApproval: true,
      payer: { by: "wallet", because: "no_server_key" },
      status: "awaiting_approval",
    });
  });

  it("the user's wallet, when this request's token may not use the key", async () => {
    w = createToyWorld();
    expect(await quoteThenPay({ bearerToken: "another-token" })).toEqual({
      needsApproval: true,
      payer: { by: "wallet", because: "no_server_key" },
      status: "awaiting_approval",
    });
  });

  it("the user's wallet, above approvalAbove, whether the server's or the request's", async () => {
    w = createToyWorld({ limits: { approvalAbove: 9_999n } });
    const above = { needsApproval: true, payer: { by: "wallet", because: "above_approval" } };
    expect(await quoteThenPay({})).toEqual({ ...above, status: "awaiting_approval" });
    w.close();
    w = createToyWorld();
    expect(await quoteThenPay({ spendingLimits: { approvalAbove: 9_999n } })).toEqual({
      ...above,
      status: "awaiting_approval",
    });
    expect(w.chain.transactions()).toEqual([]);
  });
});

// Found by a review: a quote of a key revoked mid-turn said a payment would be made; the payment was then refused.
describe("a key that ended while its turn ran", () => {
  it("is refused at the quote as at the payment: key_ended, nothing signed", async () => {
    w = createToyWorld({
      pauses: { pausedFor: () => undefined, keyEnded: (c) => (c === "ci" ? "revoked" : undefined) },
    });
    const over = { caller: "ci", grant: { name: "ci" } };
    const quote = await w.pipeline.quote(w.request(over), { url: w.url });
    expect(quote).toMatchObject({ kind: "demand", admission: { ok: false, reason: "key_ended" } });
    const outcome = await w.pipeline.pay(w.request(over), { url: w.url });
    expect(outcome).toMatchObject({ status: "refused", error: { reason: "key_ended" } });
    expect(w.chain.transactions()).toEqual([]);
  });

  it("rotated: a request of the old token signs nothing more; one of the new token pays", async () => {
    w = createToyWorld({
      pauses: {
        pausedFor: () => undefined,
        keyEnded: (c, g) => (c === "ci" && g === 0 ? "rotated" : undefined),
      },
    });
    const old = { caller: "ci", grant: { name: "ci", generation: 0 } };
    const outcome = await w.pipeline.pay(w.request(old), { url: w.url });
    expect(outcome).toMatchObject({ status: "refused", error: { reason: "key_ended" } });
    expect(outcome.error?.message).toContain("rotated while it ran");
    expect(w.chain.transactions()).toEqual([]);
    const fresh = { caller: "ci", grant: { name: "ci", generation: 1 } };
    expect((await w.pipeline.pay(w.request(fresh), { url: w.url })).status).toBe("paid");
  });
});
