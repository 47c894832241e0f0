import { afterEach, describe, expect, it } from "vitest";
import { createToyWorld, type ToyWorld, USD } from "../testing/index.js";

/**
 * The pipeline under concurrency (unit: the memory ledger, whose reservation decides under the
 * wallet's lock as PostgreSQL's does, and the toy chain): the limits hold however many payments
 * run at once, and what was paid on chain is what the ledger counts.
 */

let w: ToyWorld;
afterEach(() => w.close());

describe("payments at once", () => {
  it("never pay past the daily limit: exactly as many as fit are paid, the rest refused", async () => {
    w = createToyWorld({ price: USD });
    const outcomes = await Promise.all(
      Array.from({ length: 25 }, () => w.pipeline.pay(w.request(), { url: w.url })),
    );
    const paid = outcomes.filter((o) => o.status === "paid");
    expect(paid).toHaveLength(10);
    expect(outcomes.filter((o) => o.status === "refused").map((o) => o.error?.reason)).toEqual(
      Array.from({ length: 15 }, () => "limit_exceeded"),
    );
    expect(w.chain.transactions()).toHaveLength(10);
    expect(await w.memory.spending(w.held.address, w.clock.date())).toEqual({
      settled: 10n * USD,
      pending: 0n,
      unknown: 0n,
      today: 10n * USD,
    });
  });

  it("never pay past the per-request limit within one request", async () => {
    w = createToyWorld({ price: USD });
    const request = w.request();
    const outcomes = await Promise.all(
      Array.from({ length: 6 }, (_, i) => w.pipeline.pay(request, { url: `${w.url}?n=${i}` })),
    );
    expect(outcomes.filter((o) => o.status === "paid")).toHaveLength(2);
    expect(w.chain.transactions()).toHaveLength(2);
  });

  it("unclear payments keep their budget: the next ones are refused until the chain says", async () => {
    w = createToyWorld({
      price: 5n * USD,
      limits: { defaults: { perTransaction: 5n * USD, perRequest: 10n * USD, daily: 10n * USD } },
    });
    w.service.after = "silent";
    w.chain.landing = "late";
    const first = await Promise.all([1, 2].map(() => w.pipeline.pay(w.request(), { url: w.url })));
    expect(first.map((o) => o.status)).toEqual(["unknown", "unknown"]);
    w.service.after = "answers";
    w.chain.landing = "lands";
    expect(await w.pipeline.pay(w.request(), { url: w.url })).toMatchObject({
      status: "refused",
      error: { reason: "limit_exceeded" },
    });
    // The chain drops them; once their window passes, the reconciler frees the budget.
    w.chain.dropLate();
    w.clock.advance(10 * 60_000);
    expect(await w.reconciler.sweep()).toEqual({ resolved: 2, unresolved: 0 });
    expect(await w.pipeline.pay(w.request(), { url: w.url })).toMatchObject({ status: "paid" });
    expect(w.chain.transactions()).toHaveLength(1);
  });
});
