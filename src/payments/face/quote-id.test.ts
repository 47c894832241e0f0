import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { PayOutput } from "../../tools/contract.js";
import type { PayerSession, PaymentsFace } from "../face.js";
import { createToyWorld, HELD_TOKEN, RecordingObserver, type ToyWorld } from "../testing/index.js";
import { createPaymentsFace, createQuoteIds, QUOTE_ID_MAX_CHARS, type QuoteClaims } from "./index.js";

/**
 * Quote ids (unit: the face on the memory ledger and the toy chain): an id pays exactly what was
 * quoted, to whom it was quoted, before it expires, and at most once, on any instance sharing the
 * secret.
 */

const SECRET = "s".repeat(32);
let w: ToyWorld;
let face: PaymentsFace;
beforeEach(() => {
  w = createToyWorld();
  face = faceOf(SECRET);
});
afterEach(() => w.close());

function faceOf(secret?: string): PaymentsFace {
  return createPaymentsFace({
    pipeline: w.pipeline,
    discovery: { search: async () => ({ services: [], errors: [] }) },
    chains: w.chains,
    signers: w.signers,
    assets: w.config.assets,
    approvals: w.desk,
    history: w.memory,
    ...(secret ? { quoteSecret: secret } : {}),
  });
}

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

const TARGET = { query: { city: "Paris" }, body: { units: "metric" } };

async function quoteId(s: PayerSession = session()): Promise<string> {
  const quote = await face.quote(s, { url: w.url, ...TARGET });
  expect(quote).toMatchObject({ ok: true, chosen: { amountUsd: "0.01" } });
  if (!quote.quoteId) throw new Error("no quote id");
  return quote.quoteId;
}

/** The id with one claim changed and the signature kept. */
function tampered(id: string, change: (claims: QuoteClaims) => void): string {
  const [prefix, payload, signature] = id.split(".");
  const claims = JSON.parse(Buffer.from(payload ?? "", "base64url").toString("utf8")) as QuoteClaims;
  change(claims);
  return `${prefix}.${Buffer.from(JSON.stringify(claims)).toString("base64url")}.${signature}`;
}

const refusedWith = (code: string) => ({ status: "refused", error: { code } });

describe("a quote id", () => {
  it("is given with a payable quote, expires within the offer's signing window, and pays that offer", async () => {
    const s = session();
    const quote = await face.quote(s, { url: w.url, ...TARGET });
    // The toy offer may be signed for 60 s: the id lives no longer.
    expect(quote.quoteExpiresAt).toBe(new Date(w.clock.now() + 60_000).toISOString());
    const paid = await face.pay(s, { quoteId: quote.quoteId ?? "" });
    expect(paid).toMatchObject({ status: "paid", amountUsd: "0.01" });
    expect(paid.paymentId).toBe(createQuoteIds(SECRET).paymentIdOf(quote.quoteId ?? ""));
    expect(w.chain.transactions()).toHaveLength(1);
    // The quoted call, exactly: its query and body, as a POST.
    expect(w.service.calls.at(-1)).toMatchObject({ url: `${w.url}?city=Paris`, method: "POST", paid: true });
  });

  it("is not given when the quote cannot be paid (over a limit, or no wallet)", async () => {
    w.service.offer.price = 2_000_000n;
    expect(await face.quote(session(), { url: w.url })).not.toHaveProperty("quoteId");
    const { wallet: _w, ...anonymous } = session();
    w.service.offer.price = 10_000n;
    expect(await face.quote(anonymous, { url: w.url })).not.toHaveProperty("quoteId");
  });

  it.each([
    [
      "the caller",
      (c: QuoteClaims) => {
        c.caller = "bob";
      },
    ],
    [
      "the wallet",
      (c: QuoteClaims) => {
        c.wallet = w.user.address;
      },
    ],
    [
      "the URL",
      (c: QuoteClaims) => {
        c.target.url = `${w.url}?city=Rome`;
      },
    ],
    [
      "the query",
      (c: QuoteClaims) => {
        c.target.url = `${w.url}?city=Paris&x=1`;
      },
    ],
    [
      "the method",
      (c: QuoteClaims) => {
        c.target.method = "GET";
      },
    ],
    [
      "the body",
      (c: QuoteClaims) => {
        c.target.body = '{"units":"imperial"}';
      },
    ],
    [
      "the payee",
      (c: QuoteClaims) => {
        c.terms.payTo = w.chain.account("thief");
      },
    ],
    [
      "the network",
      (c: QuoteClaims) => {
        c.terms.network = "toy:2";
      },
    ],
    [
      "the asset",
      (c: QuoteClaims) => {
        c.terms.asset = "0xother";
      },
    ],
    [
      "the amount",
      (c: QuoteClaims) => {
        c.amount = "1";
      },
    ],
    [
      "the expiry",
      (c: QuoteClaims) => {
        c.expiresAt += 3_600_000;
      },
    ],
    [
      "the service's name",
      (c: QuoteClaims) => {
        c.name = "Your bank";
      },
    ],
  ])("with %s changed is refused, and nothing is paid", async (_field, change) => {
    const s = session();
    const id = tampered(await quoteId(s), change);
    expect(await face.pay(s, { quoteId: id })).toMatchObject(refusedWith("quote_invalid"));
    expect(s.observer.errors.map((e) => e.code)).toEqual(["quote_invalid"]);
    expect(w.chain.transactions()).toEqual([]);
    expect(w.service.calls.filter((c) => c.paid)).toEqual([]);
  });

  it("made with another secret, or malformed, is refused", async () => {
    const id = await quoteId();
    expect(await faceOf("t".repeat(32)).pay(session(), { quoteId: id })).toMatchObject(
      refusedWith("quote_invalid"),
    );
    expect(await faceOf().pay(session(), { quoteId: id })).toMatchObject(refusedWith("quote_invalid"));
    const [prefix, payload, signature = ""] = id.split(".");
    // Another spelling of the same signature bytes (the last character's unused low bit) is not
    // the same id: it would name another payment.
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    const last = alphabet[alphabet.indexOf(signature.at(-1) ?? "") ^ 1];
    const respelt = `${prefix}.${payload}.${signature.slice(0, -1)}${last}`;
    expect(Buffer.from(respelt.split(".")[2] ?? "", "base64url")).toEqual(
      Buffer.from(signature, "base64url"),
    );
    for (const bad of ["", "q1", "q1..", `${id}.x`, `q2.${payload}.${signature}`, respelt])
      expect(await face.pay(session(), { quoteId: bad })).toMatchObject(refusedWith("quote_invalid"));
    expect(w.chain.transactions()).toEqual([]);
  });

  it("holds a request of a few KiB (MCP took 512 characters at most); a larger one gets no id", async () => {
    const s = session();
    const body = { text: "a".repeat(4_000) };
    const big = await face.quote(s, { url: w.url, body });
    expect(big.quoteId?.length).toBeGreaterThan(5_000);
    expect(big.quoteId?.length).toBeLessThanOrEqual(QUOTE_ID_MAX_CHARS);
    expect(await face.pay(s, { quoteId: big.quoteId ?? "" })).toMatchObject({ status: "paid" });
    const huge = await face.quote(s, { url: w.url, body: { text: "a".repeat(QUOTE_ID_MAX_CHARS) } });
    expect(huge).toMatchObject({ ok: true, chosen: { amountUsd: "0.01" } });
    expect(huge).not.toHaveProperty("quoteId");
    expect(w.chain.transactions()).toHaveLength(1);
    // Even signed with the secret, an id longer than that is not opened.
    const ids = createQuoteIds(SECRET);
    const who = { caller: "alice", wallet: w.held.address };
    const terms = { payTo: "x", network: "toy:1", asset: "x" };
    const claims = { ...who, terms, amount: "1", expiresAt: w.clock.now() + 60_000 };
    const target = (n: number) => ({ url: w.url, method: "POST" as const, body: "a".repeat(n) });
    expect(ids.open(ids.issue({ ...claims, target: target(100) }), who, w.clock.now())).toMatchObject(claims);
    const overlong = ids.issue({ ...claims, target: target(QUOTE_ID_MAX_CHARS) });
    expect(() => ids.open(overlong, who, w.clock.now())).toThrow(/not one this service gave/);
  });

  it("of another caller, or for another wallet, is refused the same way", async () => {
    const id = await quoteId();
    expect(await face.pay(session({ caller: "bob" }), { quoteId: id })).toMatchObject(
      refusedWith("quote_invalid"),
    );
    const { caller: _c, ...anonymous } = session();
    expect(await face.pay(anonymous, { quoteId: id })).toMatchObject(refusedWith("quote_invalid"));
    expect(await face.pay(session({ wallet: w.user }), { quoteId: id })).toMatchObject(
      refusedWith("quote_invalid"),
    );
    expect(w.chain.transactions()).toEqual([]);
  });

  it("after its expiry is refused", async () => {
    const id = await quoteId();
    w.clock.advance(60_000);
    const s = session({ deadline: w.clock.now() + 60_000 });
    expect(await face.pay(s, { quoteId: id })).toMatchObject(refusedWith("quote_expired"));
    expect(w.chain.transactions()).toEqual([]);
  });
  /*
   * Found by a black-box run: a pay_quote cut off by a crash settled; the retry after the restart,
   * past the quote's 60 s, was told "quote_expired: ask for a new quote", inviting a second payment.
   */
  it("after its expiry, once paid, answers with that payment instead of quote_expired", async () => {
    const id = await quoteId();
    const first = await face.pay(session(), { quoteId: id });
    expect(first).toMatchObject({ status: "paid" });
    w.clock.advance(60_000);
    const s = session({ deadline: w.clock.now() + 60_000 });
    expect(await face.pay(s, { quoteId: id })).toMatchObject({ status: "paid", paymentId: first.paymentId });
    expect(s.observer.errors).toEqual([]);
    expect(w.chain.transactions()).toHaveLength(1);
    // Another caller still learns nothing from the id.
    expect(await face.pay(session({ caller: "bob" }), { quoteId: id })).toMatchObject(
      refusedWith("quote_invalid"),
    );
  });
});

describe("paying by quote id", () => {
  it("twice returns the first payment, and pays once", async () => {
    const id = await quoteId();
    const first = await face.pay(session(), { quoteId: id });
    const second = await face.pay(session(), { quoteId: id });
    expect(first).toMatchObject({ status: "paid" });
    expect(second).toMatchObject({
      status: "paid",
      paymentId: first.paymentId,
      transaction: first.transaction,
    });
    expect(w.chain.transactions()).toHaveLength(1);
  });

  it("at the same time, on one instance or two sharing the secret, pays once", async () => {
    const id = await quoteId();
    const other = faceOf(SECRET);
    const sessions = [session(), session(), session()];
    const outputs: PayOutput[] = await Promise.all([
      face.pay(sessions[0] as PayerSession, { quoteId: id }),
      face.pay(sessions[1] as PayerSession, { quoteId: id }),
      other.pay(sessions[2] as PayerSession, { quoteId: id }),
    ]);
    expect(w.chain.transactions()).toHaveLength(1);
    expect(new Set(outputs.map((o) => o.paymentId)).size).toBe(1);
    expect(outputs.map((o) => o.status)).not.toContain("failed");
    // The attempt that lost the row reports nothing: no error, and the audit's events hold one
    // payment that never failed (found by a black-box run: a false `failed`, reason internal).
    expect(sessions.flatMap((s) => s.observer.errors)).toEqual([]);
    expect(w.events.steps(outputs[0]?.paymentId ?? "")).not.toContain("failed");
    expect((await w.memory.listHistory({ caller: "alice", limit: 10 })).length).toBe(1);
    // Later, on either, it reads the one payment back.
    expect(await other.pay(session(), { quoteId: id })).toMatchObject({ status: "paid" });
    expect(w.chain.transactions()).toHaveLength(1);
  });

  it("after the price rose is refused unpaid; another payee, too", async () => {
    const id = await quoteId();
    w.service.offer.price = 20_000n;
    expect(await face.pay(session(), { quoteId: id })).toMatchObject(refusedWith("price_changed"));
    w.service.offer.price = 10_000n;
    w.service.offer.payTo = w.chain.account("someone-else");
    expect(await face.pay(session(), { quoteId: id })).toMatchObject(refusedWith("price_changed"));
    expect(w.chain.transactions()).toEqual([]);
    expect(await w.memory.listHistory({ caller: "alice", limit: 10 })).toEqual([]);
  });

  it("for a wallet the server cannot sign for waits for approval, once", async () => {
    const s = session({ wallet: w.user });
    const id = await quoteId(s);
    const first = await face.pay(s, { quoteId: id });
    expect(first).toMatchObject({ status: "awaiting_approval" });
    expect(await face.pay(s, { quoteId: id })).toMatchObject({
      status: "awaiting_approval",
      paymentId: first.paymentId,
      approvalExpiresAt: first.approvalExpiresAt,
    });
    expect((await w.memory.listHistory({ caller: "alice", limit: 10 })).length).toBe(1);
  });

  // Found by a black-box run: asked again past its window, the client was sent to approve a
  // payment that could no longer be paid (a new elicitation), and only then told it expired.
  it("asked again past its approval window: expired, never asked of the wallet again", async () => {
    const s = session({ wallet: w.user });
    const id = await quoteId(s);
    const first = await face.pay(s, { quoteId: id });
    expect(first).toMatchObject({ status: "awaiting_approval" });
    w.clock.advance(Date.parse(first.approvalExpiresAt ?? "") - w.clock.now() + 1_000);
    const again = await face.pay(session({ wallet: w.user, deadline: w.clock.now() + 60_000 }), {
      quoteId: id,
    });
    expect(again).toMatchObject({ status: "expired", paymentId: first.paymentId });
    expect(again).not.toHaveProperty("approvalExpiresAt");
  });
});
