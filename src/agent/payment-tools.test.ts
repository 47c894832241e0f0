import type { Tool } from "ai";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { AppError } from "../errors/index.js";
import { createPaymentsFace } from "../payments/face/index.js";
import { createToyWorld, HELD_TOKEN, type ToyWorld, USD } from "../payments/testing/index.js";
import type { PaymentSummary, PaymentUpdate, Wallet } from "../protocol/index.js";
import { TOOL_NAMES } from "../tools/contract.js";
import type { TurnContext } from "./context.js";
import { createPaymentTools } from "./payment-tools.js";

/**
 * The agent's payment tools (unit: the pipeline on the memory ledger and the toy chain): what the
 * model can ask, and what it cannot make happen twice.
 */

let w: ToyWorld;
beforeEach(() => {
  w = createToyWorld();
});
afterEach(() => w.close());

interface Turn {
  ctx: TurnContext;
  updates: PaymentUpdate[];
  summaries: PaymentSummary[];
  errors: AppError[];
  call(name: string, input: Record<string, unknown>): Promise<Record<string, unknown>>;
}

let turns = 0;
function turn(wallet: Wallet = w.held, token: string | undefined = HELD_TOKEN): Turn {
  const updates: PaymentUpdate[] = [];
  const summaries: PaymentSummary[] = [];
  const errors: AppError[] = [];
  turns += 1;
  const ctx: TurnContext = {
    payer: { scopeId: `req_turn_${turns}`, wallet, bearerToken: token },
    signal: new AbortController().signal,
    deadline: w.clock.now() + 60_000,
    now: w.clock.now,
    emitPayment: (u) => void updates.push(u),
    recordPayment: (s) => void summaries.push(s),
    reportError: (e) => void errors.push(e),
  };
  // A fresh face on the toy world per turn (the service's own wiring is src/payments/index.ts).
  const face = createPaymentsFace({
    pipeline: w.pipeline,
    discovery: { search: async () => ({ services: [] }) as never },
    chains: w.chains,
    signers: w.signers,
    assets: w.config.assets,
  });
  const tools = createPaymentTools(face)(ctx);
  const call = async (name: string, input: Record<string, unknown>) => {
    const tool = tools[name] as Tool<Record<string, unknown>, Record<string, unknown>>;
    return (await tool.execute?.(input, { toolCallId: "call", messages: [], context: {} })) as Record<
      string,
      unknown
    >;
  };
  return { ctx, updates, summaries, errors, call };
}

describe("payment tools", () => {
  it("the same pay_and_fetch twice in a turn pays once and answers the same", async () => {
    const t = turn();
    const [a, b] = await Promise.all([
      t.call(TOOL_NAMES.pay, { url: w.url }),
      t.call(TOOL_NAMES.pay, { url: w.url }),
    ]);
    expect(a).toMatchObject({ status: "paid" });
    expect(b).toEqual(a);
    // A fragment is never sent: with one, it is still the same call.
    expect(await t.call(TOOL_NAMES.pay, { url: `${w.url}#again` })).toEqual(a);
    expect(w.chain.transactions()).toHaveLength(1);
    // Another turn is another request: it pays again.
    expect(await turn().call(TOOL_NAMES.pay, { url: w.url })).toMatchObject({ status: "paid" });
    expect(w.chain.transactions()).toHaveLength(2);
  });

  it("never pays more than the price quoted in the turn, even when the model leaves maxUsd out", async () => {
    const t = turn();
    expect(await t.call(TOOL_NAMES.quote, { url: w.url })).toMatchObject({
      ok: true,
      paymentRequired: true,
      chosen: { amountUsd: "0.01" },
    });
    w.service.offer.price = 20_000n;
    expect(await t.call(TOOL_NAMES.pay, { url: w.url })).toMatchObject({
      status: "refused",
      error: { code: "price_changed" },
    });
    expect(await t.call(TOOL_NAMES.pay, { url: `${w.url}#again`, maxUsd: "1000" })).toMatchObject({
      status: "refused",
      error: { code: "price_changed" },
    });
    expect(w.chain.transactions()).toEqual([]);
  });

  // Found by a review: once quoted, the call's own maxUsd was dropped and the quote was the only cap.
  it("a maxUsd below the turn's quote still caps the payment", async () => {
    const t = turn();
    expect(await t.call(TOOL_NAMES.quote, { url: w.url })).toMatchObject({ chosen: { amountUsd: "0.01" } });
    expect(await t.call(TOOL_NAMES.pay, { url: w.url, maxUsd: "0.005" })).toMatchObject({
      status: "refused",
      error: { code: "price_changed" },
    });
    expect(await t.call(TOOL_NAMES.pay, { url: w.url, maxUsd: "a lot" })).toMatchObject({
      status: "refused",
    });
    expect(w.chain.transactions()).toEqual([]);
    expect(await t.call(TOOL_NAMES.pay, { url: w.url, maxUsd: "0.01" })).toMatchObject({ status: "paid" });
  });

  // Found by a review: twenty offers with a 40,000-character asset put 1.6 MB in the model's context.
  it("a 402's oversized offer fields are cut before the model, the stream or the ledger see them", async () => {
    const demand = w.service.demand.bind(w.service);
    const big = "x".repeat(40_000);
    w.service.demand = (url: string) => {
      const d = demand(url);
      const offer = d.accepts[0];
      if (offer) d.accepts = Array.from({ length: 20 }, () => ({ ...offer, asset: big, payTo: big }));
      return d;
    };
    try {
      const t = turn();
      const quote = await t.call(TOOL_NAMES.quote, { url: w.url });
      const paid = await t.call(TOOL_NAMES.pay, { url: w.url });
      expect(paid).toMatchObject({ status: "refused" });
      expect(JSON.stringify(quote).length).toBeLessThan(20_000);
      expect(JSON.stringify(paid).length).toBeLessThan(20_000);
      expect(w.chain.transactions()).toEqual([]);
    } finally {
      w.service.demand = demand;
    }
  });

  // Found by a review: the model's own malformed call was reported as the service being down.
  it("a GET call with a body is refused as the call's fault, not the service's", async () => {
    const t = turn();
    const call = { url: w.url, method: "GET", body: { city: "Paris" } };
    for (const tool of [TOOL_NAMES.quote, TOOL_NAMES.pay]) {
      const out = JSON.stringify(await t.call(tool, call));
      expect(out).toMatch(/takes no body/);
      expect(out).not.toMatch(/service_unavailable/);
    }
    expect(w.chain.transactions()).toEqual([]);
  });

  it("pays only the payee quoted in the turn: one named after the quote is refused, nothing signed", async () => {
    const t = turn();
    const quote = await t.call(TOOL_NAMES.quote, { url: w.url });
    expect(quote).toMatchObject({ ok: true, chosen: { payTo: w.service.offer.payTo } });
    w.service.offer.payTo = w.chain.account("thief");
    const refused = await t.call(TOOL_NAMES.pay, { url: w.url });
    // Told as the price's change is: a refused payment with its id, the price and the quote.
    expect(refused).toMatchObject({
      status: "refused",
      paymentId: expect.any(String),
      error: { code: "price_changed", quotedUsd: "0.01", priceUsd: "0.01" },
    });
    expect(t.updates.map((u) => u.status)).toEqual(["quoted", "refused"]);
    expect(w.chain.transactions()).toEqual([]);
    // Without a quote in the turn there is nothing to hold it to: the pay tool's own probe decides.
    expect(await turn().call(TOOL_NAMES.pay, { url: w.url })).toMatchObject({ status: "paid" });
  });

  it("an offer in another asset than the USDC it pays with is not priced in dollars", async () => {
    w.service.offer.asset = "0x00000000000000000000000000000000000000aa";
    w.service.offer.price = 10_000_000n;
    const t = turn();
    const quote = await t.call(TOOL_NAMES.quote, { url: w.url });
    expect(quote).toMatchObject({ ok: true, chosen: null, refusal: { code: "no_acceptable_offer" } });
    // Refused before any payment: the turn says so with its code, as a refused payment would.
    expect(t.errors.map((e) => e.code)).toEqual(["payment_unavailable"]);
    const [offer] = quote.offers as Array<Record<string, unknown>>;
    expect(offer).toMatchObject({ amountAtomic: "10000000", asset: w.service.offer.asset });
    expect(offer).not.toHaveProperty("amountUsd");
    expect(w.chain.transactions()).toEqual([]);
  });

  it("a quote over a limit says so on the stream, and pays nothing", async () => {
    w.service.offer.price = 2n * USD;
    const t = turn();
    const quote = await t.call(TOOL_NAMES.quote, { url: w.url });
    expect(quote).toMatchObject({ ok: true, chosen: null, refusal: { code: "limit_exceeded" } });
    expect(t.errors.map((e) => e.code)).toEqual(["limit_exceeded"]);
    expect(w.chain.transactions()).toEqual([]);
  });

  it("get_budget shows what was spent, what remains, the balance and whether the server can sign", async () => {
    const t = turn();
    await t.call(TOOL_NAMES.pay, { url: w.url });
    expect(await t.call(TOOL_NAMES.budget, {})).toMatchObject({
      wallet: w.held.address,
      spentTodayUsd: "0.01",
      spentThisRequestUsd: "0.01",
      remainingTodayUsd: "9.99",
      balances: [{ network: "toy:1", usd: "99.99" }],
      canSign: true,
    });
    expect(await turn(w.user).call(TOOL_NAMES.budget, {})).toMatchObject({
      canSign: false,
      spentTodayUsd: "0.00",
    });
    expect(await turn(w.held, "another-token").call(TOOL_NAMES.budget, {})).toMatchObject({ canSign: false });
  });

  it("a wallet without a usable key is asked to approve: nothing is paid by the tool", async () => {
    const t = turn(w.user);
    expect(await t.call(TOOL_NAMES.pay, { url: w.url })).toMatchObject({ status: "awaiting_approval" });
    expect(t.summaries.map((s) => s.status)).toEqual(["awaiting_approval"]);
    expect(w.chain.transactions()).toEqual([]);
  });
});
