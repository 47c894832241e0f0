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
import type { PageApprovals } from "./page-approval.js";

/**
 * The payments face (unit: the memory ledger and the toy chain): limits still hold for a payment
 * by quote id (they come from the session, never from an argument), a caller reads only its own
 * payments, and an approval answered by the payment's caller is delivered.
 */

let w: ToyWorld;
let face: PaymentsFace;
function open(options: ToyWorldOptions = {}, page?: Pick<PageApprovals, "kept">): void {
  w = createToyWorld(options);
  face = createPaymentsFace({
    ...(page ? { page: page as PageApprovals } : {}),
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

  // A black-box review (h32): with no token every caller is "none", so anyone with a payment's
  // approval URL (it holds the id) read the answer the page had kept for the one who asked.
  it("getPayment: a reader with no identity gets the kept answer only with the payment's own scope", async () => {
    const kept = {
      untrusted: true as const,
      contentType: "application/json",
      body: { temp: 21 },
      truncated: false,
    };
    open({}, { kept: async () => kept });
    const asked = session({ caller: undefined });
    const paid = await face.pay(asked, { url: w.url });
    const id = paid.paymentId ?? "";
    expect(paid.status).toBe("paid");
    expect((await face.getPayment(undefined, id))?.data).toBeUndefined();
    expect((await face.getPayment(undefined, id, "scope_of_someone_else"))?.data).toBeUndefined();
    expect((await face.getPayment(undefined, id, asked.scopeId))?.data).toEqual(kept);
  });

  it("listPayments: only the caller's", async () => {
    open();
    await face.pay(session(), { url: w.url });
    await face.pay(session({ caller: "bob" }), { url: w.url });
    const mine = await face.listPayments({ caller: "alice", limit: 10 });
    expect(mine.items.map((p) => p.status)).toEqual(["settled"]);
    expect(mine.nextCursor).toBeUndefined();
  });

  it("listPayments: a page at a time, each payment once, the cursor naming no caller", async () => {
    open();
    for (let i = 0; i < 5; i++) {
      await face.pay(session(), { url: `${w.url}?n=${i}` });
      w.clock.advance(1_000);
    }
    await face.pay(session({ caller: "bob" }), { url: w.url });
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await face.listPayments({ caller: "alice", limit: 2, ...(cursor ? { cursor } : {}) });
      expect(page.items.length).toBeLessThanOrEqual(2);
      seen.push(...page.items.map((p) => p.paymentId));
      cursor = page.nextCursor;
      pages++;
    } while (cursor && pages < 10);
    expect(pages).toBe(3);
    expect(new Set(seen).size).toBe(5);
    const alices = await w.memory.listHistory({ caller: "alice", limit: 10 });
    expect(seen).toEqual(alices.map((r) => r.paymentId));
    // Alice's cursor in Bob's hands reads on in Bob's payments, never in Alice's.
    const first = await face.listPayments({ caller: "alice", limit: 1 });
    const bobs = await face.listPayments({ caller: "bob", limit: 10, cursor: first.nextCursor ?? "" });
    expect(bobs.items.every((p) => !seen.includes(p.paymentId))).toBe(true);
  });

  it("listPayments: a bounded page and only a cursor it gave", async () => {
    open();
    const code = (p: Promise<unknown>) =>
      p.then(
        () => "resolved",
        (e: unknown) => (e instanceof AppError ? e.code : String(e)),
      );
    for (const limit of [0, 101, 1.5, Number.NaN])
      expect(await code(face.listPayments({ caller: "alice", limit })), String(limit)).toBe(
        "invalid_request",
      );
    for (const cursor of [
      "",
      "not a cursor",
      Buffer.from("2026-01-01T00:00:00Z|x").toString("base64url"),
      "A".repeat(201),
    ])
      expect(await code(face.listPayments({ caller: "alice", limit: 1, cursor })), cursor).toBe(
        "invalid_request",
      );
    expect(await code(face.listPayments({ caller: "alice", limit: 100 }))).toBe("resolved");
  });

  it("getPayment and listPayments: what a service put in a row is cleaned of hidden characters", async () => {
    open();
    // A hostile service's payee, with a right-to-left override that would reverse what follows.
    const payTo = w.service.offer.payTo;
    (w.service.offer as { payTo: string }).payTo = `${payTo}\u202e`;
    const out = await face.pay(session({ wallet: w.user }), { url: w.url });
    expect((await w.ledger.get(out.paymentId ?? ""))?.payTo).toContain("\u202e");
    const view = await face.getPayment("alice", out.paymentId ?? "");
    expect(view).toMatchObject({ status: "awaiting_approval", payTo });
    const listed = await face.listPayments({ caller: "alice", limit: 10 });
    expect(listed.items.map((p) => p.payTo)).toEqual([payTo]);
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

  // Found by a black-box run: a service outside allowedServices was listed, then refused when called.
  it("findServices lists only the services the request may pay (allowedServices)", async () => {
    open();
    face = createPaymentsFace({
      pipeline: w.pipeline,
      discovery: {
        search: async () => ({
          services: [
            { url: w.url, name: "Toy weather" },
            { url: "https://elsewhere.example/data", name: "Other" },
          ],
          errors: [],
        }),
      } as never,
      chains: w.chains,
      signers: w.signers,
      assets: w.config.assets,
      quoteSecret: "s".repeat(32),
    });
    const names = async (spendingLimits?: SpendingLimitsInput) =>
      (await face.findServices(session(spendingLimits ? { spendingLimits } : {}))).services.map(
        (x) => x.name,
      );
    expect(await names()).toEqual(["Toy weather", "Other"]);
    expect(await names({ allowedServices: [new URL(w.url).origin] })).toEqual(["Toy weather"]);
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

describe("the service's name on a payment by quote id", () => {
  // Each MCP tool call builds its own session object: the name must travel with the quote id.
  it("is bound into the quote id from discovery, so another session object pays it named", async () => {
    open();
    const id = await quoteId(session());
    const paying = session();
    expect(await face.pay(paying, { quoteId: id })).toMatchObject({
      status: "paid",
      serviceName: "Toy weather",
    });
    expect(paying.observer.updates.at(-1)).toMatchObject({
      status: "settled",
      service: { url: w.url, name: "Toy weather" },
    });
    // Paid before: read back from its row, still named.
    expect(await face.pay(session(), { quoteId: id })).toMatchObject({ serviceName: "Toy weather" });
  });

  it("an approval's row, and so the approval page and getPayment, carry it", async () => {
    open();
    const id = await quoteId(session({ wallet: w.user }));
    const out = await face.pay(session({ wallet: w.user }), { quoteId: id });
    expect(out).toMatchObject({ status: "awaiting_approval", serviceName: "Toy weather" });
    const stored = (await w.ledger.get(out.paymentId ?? ""))?.approval as StoredApproval;
    expect(stored.serviceName).toBe("Toy weather");
    expect(await face.getPayment("alice", out.paymentId ?? "")).toMatchObject({ serviceName: "Toy weather" });
  });

  it("a payment awaiting approval past its window reads as expired, before the reconciler writes so", async () => {
    open();
    const id = await quoteId(session({ wallet: w.user }));
    const out = await face.pay(session({ wallet: w.user }), { quoteId: id });
    const paymentId = out.paymentId ?? "";
    expect(await face.getPayment("alice", paymentId)).toMatchObject({ status: "awaiting_approval" });
    const row = await w.ledger.get(paymentId);
    w.clock.ms = (row?.expiresAt ?? new Date()).getTime();
    expect(await face.getPayment("alice", paymentId)).toMatchObject({ status: "expired" });
    expect((await face.listPayments({ caller: "alice", limit: 10 })).items).toEqual([
      expect.objectContaining({ paymentId, status: "expired" }),
    ]);
    expect((await w.ledger.get(paymentId))?.status).toBe("awaiting_approval"); // not written yet
  });

  // Found by a black-box run: with the directory down, the turn said no such service existed.
  it("findServices says the directory is down (service_unavailable), not that nothing exists", async () => {
    open();
    const withSearch = (result: { services: unknown[]; errors: string[] }) =>
      createPaymentsFace({
        pipeline: w.pipeline,
        discovery: { search: async () => result } as never,
        chains: w.chains,
        signers: w.signers,
        assets: w.config.assets,
        quoteSecret: "s".repeat(32),
      });
    const down = session();
    const errors = ["http://127.0.0.1:4021/discovery/resources: HTTP 503"];
    expect(await withSearch({ services: [], errors }).findServices(down, "weather")).toMatchObject({
      services: [],
      errors,
    });
    expect(down.observer.errors).toEqual([
      expect.objectContaining({ code: "service_unavailable", details: { service: "http://127.0.0.1:4021" } }),
    ]);
    // Nothing found where the directory answered is an answer, not an outage.
    const empty = session();
    await withSearch({ services: [], errors: [] }).findServices(empty, "weather");
    expect(empty.observer.errors).toEqual([]);
  });

  it("discovery's name is cleaned of hidden characters; a failing or silent discovery leaves none", async () => {
    const quoted = async (search: () => Promise<unknown>) => {
      open();
      face = createPaymentsFace({
        pipeline: w.pipeline,
        discovery: { search } as never,
        chains: w.chains,
        signers: w.signers,
        assets: w.config.assets,
        quoteSecret: "s".repeat(32),
      });
      const paid = await face.pay(session(), { quoteId: await quoteId(session()) });
      w.close();
      return paid;
    };
    const hidden = await quoted(async () => ({
      services: [{ url: `${w.url}?x=1`, name: "Toy\u202e weather\u{E0041}" }],
    }));
    expect(hidden).toMatchObject({ status: "paid", serviceName: "Toy weather" });
    const failing = await quoted(async () => {
      throw new Error("discovery down");
    });
    expect(failing.status).toBe("paid");
    expect(failing.serviceName).toBeUndefined();
    const other = await quoted(async () => ({
      services: [{ url: "http://elsewhere.example/", name: "Other" }],
    }));
    expect(other.serviceName).toBeUndefined();
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

  it("taken up in two steps: every check first, then the delivery streams to the observer given", async () => {
    open();
    const asked = await awaiting();
    const answer = {
      paymentId: asked.paymentId,
      kind: "signature" as const,
      signature: w.chain.sign(asked.authorization),
    };
    const taken = await face.takeUpApproval({
      answer,
      payer: { wallet: w.user, caller: "alice", scopeId: "req_answer" },
      signal,
    });
    expect(taken).toMatchObject({ paymentId: asked.paymentId, service: w.url });
    // The updates sent before the observer came are not lost: they go to it first.
    const observer = new RecordingObserver();
    expect(await taken.deliver(observer)).toMatchObject({ status: "paid", paymentId: asked.paymentId });
    expect(observer.statuses()).toEqual(["reserved", "signed", "submitted", "settled"]);
    expect(w.chain.transactions()).toHaveLength(1);
    // Another caller's answer is refused at the first step, before anything moves.
    const other = await awaiting();
    const refused = face.takeUpApproval({
      answer: { paymentId: other.paymentId, kind: "reject" },
      payer: { wallet: w.user, caller: "bob", scopeId: "req_answer" },
      signal,
    });
    await expect(refused).rejects.toMatchObject({ code: "approval_wrong_caller" });
    expect((await w.ledger.get(other.paymentId))?.status).toBe("awaiting_approval");
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
