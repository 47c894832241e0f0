import { afterEach, describe, expect, it } from "vitest";
import type { FinishPayload, StreamEvent } from "../../protocol/index.js";
import { createToyWorld, type ToyWorld } from "../testing/index.js";
import { ledgerRebuilder } from "./index.js";

/**
 * Recovery (unit): the answer an interrupted attempt's key gets is rebuilt from the ledger rows the
 * payment left (memory ledger, toy chain), and rebuilding never pays anything again.
 */

let w: ToyWorld;
afterEach(() => w.close());

const finishOf = (events: StreamEvent[]): FinishPayload => {
  const finish = events.find((e) => e.type === "finish");
  if (finish?.type !== "finish") throw new Error("no finish");
  return finish.finish;
};

describe("answers rebuilt from the ledger", () => {
  it.each([
    ["settled", (_w: ToyWorld) => {}, "payment-complete", true, "settled"],
    [
      "unclear",
      (x: ToyWorld) => {
        x.service.after = "silent";
        x.chain.landing = "late";
      },
      "payment-unclear",
      false,
      "unknown",
    ],
    ["awaiting approval", (_w: ToyWorld) => {}, "approval-required", true, "awaiting_approval"],
  ] as const)("%s", async (name, setup, finishReason, final, status) => {
    w = createToyWorld();
    setup(w);
    const request = w.request(name === "awaiting approval" ? { wallet: w.user } : {});
    await w.pipeline.pay(request, { url: w.url });
    const before = w.chain.transactions().length;
    const rebuilt = await ledgerRebuilder(w.ledger).request(request.scopeId, "toy-model");
    expect(rebuilt?.final).toBe(final);
    const finish = finishOf(rebuilt?.events ?? []);
    expect(finish.finishReason).toBe(finishReason);
    expect(finish.payments?.map((p) => p.status)).toEqual([status]);
    expect(finish.transactions).toEqual(status === "settled" ? [w.chain.transactions()[0]?.txHash] : []);
    expect(w.chain.transactions()).toHaveLength(before);
    // It says where the answer comes from, and claims no interruption it cannot know of (h51).
    const said = (rebuilt?.events ?? []).flatMap((e) => (e.type === "text" ? [e.text] : [])).join("");
    expect(said).toMatch(/^This was asked before; this is what the payment ledger holds for it now\./);
  });

  it("a payment failed for sure is said so; a request that reserved nothing runs afresh", async () => {
    w = createToyWorld();
    w.chain.landing = "refused";
    const request = w.request();
    await w.pipeline.pay(request, { url: w.url });
    // The authorization's window passes unused: the reconciler fails it.
    w.clock.advance(10 * 60_000);
    await w.reconciler.sweep();
    const rebuilt = await ledgerRebuilder(w.ledger).request(request.scopeId, "toy-model");
    expect(finishOf(rebuilt?.events ?? []).finishReason).toBe("payment-failed");
    expect(rebuilt?.final).toBe(true);
    expect(await ledgerRebuilder(w.ledger).request("req_nothing", "toy-model")).toBeUndefined();
  });

  it("an approval's answer: only for its own wallet and caller, and not while it still waits", async () => {
    w = createToyWorld();
    const outcome = await w.pipeline.pay(w.request({ wallet: w.user }), { url: w.url });
    const id = outcome.paymentId ?? "";
    const rebuilder = ledgerRebuilder(w.ledger);
    const mine = { wallet: w.user.address, caller: null };
    expect(await rebuilder.approval(id, "m", mine)).toBeUndefined();
    await w.ledger.transition(id, "rejected", {}, w.clock.date());
    expect(await rebuilder.approval(id, "m", { ...mine, wallet: w.held.address })).toBeUndefined();
    expect(await rebuilder.approval(id, "m", { ...mine, caller: "someone" })).toBeUndefined();
    expect((await rebuilder.approval(id, "m", mine))?.final).toBe(true);
  });
});
