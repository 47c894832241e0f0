import { afterEach, describe, expect, it } from "vitest";
import type { ToyAuthorization } from "../../chains/testing/index.js";
import { AppError } from "../../errors/index.js";
import type { SpendingLimitsInput } from "../../protocol/index.js";
import type { PayerSession, PaymentsFace } from "../face.js";
import type { StoredApproval } from "../ports/index.js";
import {
  createToyWorld,
  HELD_TOKEN,
  RecordingObserver,
  type ToyWorld,
  type ToyWorldOptions,
  USD,
} from "../testing/index.js";
import { createPaymentsFace } from "./index.js";

/**
 * The payments face (unit: the memory ledger and the toy chain): limits still hold for a payment
 * by quote id (they come from the session, never from an argument), a caller reads only its own
 * payments, and an approval answered by the payment's caller is delivered.
 */

let w: ToyWorld;
let face: PaymentsFace;
function open(options: ToyWorldOptions = {}): void {
  w = createToyWorld(options);
  face = createPaymentsFace({
    pipeline: w.pipeline,
    discovery: { search: async () => ({ services: [{ url: w.url, name: "Toy weather" }] }) as never },
    chains: w.chains,
    signers: w.signers,
    assets: w.config.assets,
    approvals: w.desk,
    history: w.memory,
    quoteSecret: "s".repeat(32),
  });
}
afterEach(() => w.close());

let scopes = 0;
function session(over: Partial<PayerSession> = {}): PayerSession & { observer: RecordingObserver } {
  return {
    caller: "alice",
    bearerToken: HELD_TOKEN,
    wallet: w.held,
    scopeId: `scope_${++scopes}`,
    signal: new AbortController().signal,
    deadline: w.clock.now() + 60_000,
    ...over,
    observer: new RecordingObserver(),
  };
}

async function quoteId(s: PayerSession): Promise<string> {
  const quote = await face.quote(s, { url: w.url });
  if (!quote.quoteId) throw new Error(`no quote id: ${JSON.stringify(quote)}`);
  return quote.quoteId;
}

/** Pay `n` different calls by target, each in its own session of `scopeId`. */
async function spend(n: number, scopeId?: string): Promise<void> {
  for (let i = 0; i < n; i++) {
    const s = session(scopeId ? { scopeId } : {});
    expect(await face.pay(s, { url: `${w.url}?n=${i}` })).toMatchObject({ status: "paid" });
  }
}

const limitRefusal = (limit: string) => ({ status: "refused", error: { code: "limit_exceeded", limit } });

describe("limits on a payment by quote id", () => {
  it("per transaction: the session's own limit, not the quote's, decides", async () => {
    open({ price: 600_000n });
    const id = await quoteId(session());
    const tighter: SpendingLimitsInput = { perTransaction: 500_000n };
    expect(await face.pay(session({ spendingLimits: tighter }), { quoteId: id })).toMatchObject(
      limitRefusal("perTransaction"),
    );
    expect(w.chain.transactions()).toEqual([]);
    expect(await face.pay(session(), { quoteId: id })).toMatchObject({ status: "paid" });
  });

  it("per request: counted within the session's scopeId", async () => {
    open({ price: 600_000n });
    const s = session();
    const id = await quoteId(s);
    await spend(3, s.scopeId); // 1.80 of the 2.00 per request
    expect(await face.pay(session({ scopeId: s.scopeId }), { quoteId: id })).toMatchObject(
      limitRefusal("perRequest"),
    );
    expect(w.chain.transactions()).toHaveLength(3);
    // The same quote in another scope is within its limit.
    expect(await face.pay(session(), { quoteId: id })).toMatchObject({ status: "paid" });
  });

  it("daily: counted across scopes", async () => {
    open({
      price: USD,
      limits: {
        defaults: { perTransaction: USD, perRequest: 2n * USD, daily: 3n * USD },
        caps: { perTransaction: 100n * USD, perRequest: 100n * USD, daily: 1000n * USD },
      },
    });
    const id = await quoteId(session());
    await spend(3);
    expect(await face.pay(session(), { quoteId: id })).toMatchObject(limitRefusal("daily"));
    expect(w.chain.transactions()).toHaveLength(3);
  });
});

describe("reading payments", () => {
  it("getPayment: the caller's own; another's, an unknown or a malformed id reads as nothing", async () => {
    open();
    const paid = await face.pay(session(), { url: w.url });
    const id = paid.paymentId ?? "";
    expect(await face.getPayment("alice", id)).toMatchObject({ paymentId: id, status: "settled" });
    expect(await face.getPayment("bob", id)).toBeUndefined();
    expect(await face.getPayment(undefined, id)).toBeUndefined();
    expect(await face.getPayment("alice", "pay_00000000-0000-0000-0000-000000000000")).toBeUndefined();
    expect(await face.getPayment("alice", `${id}x`)).toBeUndefined();
  });

  it("listPayments: only the caller's", async () => {
    open();
    await face.pay(session(), { url: w.url });
    await face.pay(session({ caller: "bob" }), { url: w.url });
    const mine = await face.listPayments({ caller: "alice", limit: 10 });
    expect(mine.map((p) => p.status)).toEqual(["settled"]);
  });

  it("budget: the session's limits and what it committed", async () => {
    open();
    const s = session({ spendingLimits: { daily: 5n * USD } });
    await face.pay(s, { url: w.url });
    expect(await face.budget(s)).toMatchObject({
      limits: { dailyUsd: "5.00" },
      spentThisRequestUsd: "0.01",
      canSign: true,
    });
  });

  it("findServices names the service its payments then carry", async () => {
    open();
    const s = session();
    await face.findServices(s, "weather");
    await face.pay(s, { url: w.url });
    expect(s.observer.updates.at(-1)).toMatchObject({
      status: "settled",
      service: { url: w.url, name: "Toy weather" },
    });
  });
});

describe("answering an approval", () => {
  async function awaiting(): Promise<{ paymentId: string; authorization: ToyAuthorization }> {
    const out = await face.pay(session({ wallet: w.user }), { url: w.url });
    expect(out.status).toBe("awaiting_approval");
    const stored = (await w.ledger.get(out.paymentId ?? ""))?.approval as StoredApproval;
    if (stored.sign.kind !== "evm-typed-data") throw new Error("not typed data");
    return {
      paymentId: out.paymentId ?? "",
      authorization: stored.sign.typedData.message as unknown as ToyAuthorization,
    };
  }
  const signal = new AbortController().signal;

  it("from the payment's caller: checked, then delivered", async () => {
    open();
    const asked = await awaiting();
    const answer = {
      paymentId: asked.paymentId,
      kind: "signature" as const,
      signature: w.chain.sign(asked.authorization),
    };
    const out = await face.answerApproval({
      answer,
      wallet: w.user,
      via: { kind: "caller", caller: "alice" },
      signal,
    });
    expect(out).toMatchObject({ status: "paid", paymentId: asked.paymentId, service: w.url });
    expect(w.chain.transactions()).toHaveLength(1);
  });

  it("from another caller is refused before anything moves; a page answer needs the page", async () => {
    open();
    const asked = await awaiting();
    const answer = { paymentId: asked.paymentId, kind: "reject" as const };
    const codeOf = (p: Promise<unknown>) =>
      p.then(
        () => "resolved",
        (e: unknown) => (e instanceof AppError ? e.code : String(e)),
      );
    expect(
      await codeOf(
        face.answerApproval({ answer, wallet: w.user, via: { kind: "caller", caller: "bob" }, signal }),
      ),
    ).toBe("approval_wrong_caller");
    expect(await codeOf(face.answerApproval({ answer, wallet: w.user, via: { kind: "page" }, signal }))).toBe(
      "not_found",
    );
    expect((await w.ledger.get(asked.paymentId))?.status).toBe("awaiting_approval");
  });
});
