import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ToyAuthorization } from "../../chains/testing/index.js";
import type { ValidatedApproval } from "../../protocol/index.js";
import type { PayerSession, PaymentsFace } from "../face.js";
import type { KeyGrant, StoredApproval } from "../ports/index.js";
import { createToyWorld, HELD_TOKEN, RecordingObserver, type ToyWorld, USD } from "../testing/index.js";
import { createPaymentsFace } from "./index.js";

/**
 * An operator's key's caps through the payments face (unit: the memory ledger and the toy chain,
 * docs/payments.md#spending-limits): the key's caps bound every payment whatever limits the request sends,
 * its daily cap counts over every wallet it pays from, its wallets are the only ones that pay, the
 * budget shows them, and a payment that waits for the wallet is held to them when it is answered,
 * by the caller or on the approval page.
 */

const CENT = USD / 100n;
let w: ToyWorld;
let face: PaymentsFace;
beforeEach(() => {
  w = createToyWorld();
  face = createPaymentsFace({
    pipeline: w.pipeline,
    discovery: { search: async () => ({ services: [] }) as never },
    chains: w.chains,
    signers: w.signers,
    assets: w.config.assets,
    approvals: w.desk,
    history: w.memory,
    quoteSecret: "s".repeat(32),
  });
});
afterEach(() => w.close());

const KEY = "ops-key";
let scopes = 0;
/** A session of the key (each its own request), asking for daily "100" whatever its cap. */
function session(grant: Omit<KeyGrant, "name">, over: Partial<PayerSession> = {}) {
  return {
    caller: KEY,
    grant: { name: KEY, ...grant },
    bearerToken: HELD_TOKEN,
    wallet: w.held,
    spendingLimits: { daily: 100n * USD },
    scopeId: `scope_${++scopes}`,
    signal: new AbortController().signal,
    deadline: w.clock.now() + 60_000,
    ...over,
    observer: new RecordingObserver(),
  } satisfies PayerSession;
}
const weather = (city: string) => ({ url: w.url, query: { city } });

describe("a key's caps", () => {
  it("a $0.02 daily key pays two $0.01 asks and is refused the third, whatever daily the request sends", async () => {
    const grant = { daily: 2n * CENT };
    expect(await face.pay(session(grant), weather("Paris"))).toMatchObject({ status: "paid" });
    expect(await face.pay(session(grant), weather("Lyon"))).toMatchObject({ status: "paid" });
    const third = session(grant);
    expect(await face.pay(third, weather("Nice"))).toMatchObject({
      status: "refused",
      error: { code: "limit_exceeded", limit: "daily", limitUsd: "0.02", remainingUsd: "0.00" },
    });
    expect(w.chain.transactions()).toHaveLength(2);
    expect(third.observer.errors.map((e) => e.code)).toEqual(["limit_exceeded"]);
    // The meter the client draws names the key's day.
    expect(third.observer.updates.at(-1)?.budget?.daily).toMatchObject({
      limit: { usd: "0.02" },
      spent: { usd: "0.02" },
      remaining: { usd: "0.00" },
    });
  });

  it("bounds the quote: a price above the key's per-transaction cap is refused, with no id", async () => {
    const grant = { perTransaction: CENT / 2n };
    const quote = await face.quote(session(grant), weather("Paris"));
    expect(quote).toMatchObject({
      ok: true,
      limits: { perTransaction: { limitUsd: "0.005" } },
      refusal: { code: "limit_exceeded" },
    });
    expect(quote.quoteId).toBeUndefined();
  });

  it("counts the key's daily over every wallet it pays from; the budget says which day binds", async () => {
    const grant = { daily: 2n * CENT };
    expect(await face.pay(session(grant), weather("Paris"))).toMatchObject({ status: "paid" });
    // The same key from the user's wallet (no held key): the wallet is asked, then answers.
    const fromUser = session(grant, { wallet: w.user });
    const asked = await face.pay(fromUser, weather("Lyon"));
    expect(asked).toMatchObject({ status: "awaiting_approval" });
    const budget = await face.budget(session(grant, { wallet: w.user }));
    expect(budget).toMatchObject({
      // The key's day binds: the top-level day, spent and remaining are the key's.
      limits: { dailyUsd: "0.02" },
      spentTodayUsd: "0.01",
      remainingTodayUsd: "0.01",
      key: {
        name: KEY,
        dailyUsd: "0.02",
        spentTodayUsd: "0.01",
        remainingTodayUsd: "0.01",
        dailyBinds: true,
      },
    });
    // Meanwhile the key spends the rest of its day from the held wallet.
    expect(await face.pay(session(grant), weather("Nice"))).toMatchObject({ status: "paid" });
    const answer = await signedAnswer(asked.paymentId ?? "");
    const refused = face.answerApproval({
      answer,
      wallet: w.user,
      via: { kind: "caller", caller: KEY, grant: { name: KEY, ...grant } },
      signal: new AbortController().signal,
    });
    await expect(refused).rejects.toMatchObject({
      code: "limit_exceeded",
      details: { limit: "daily", remainingUsd: "0.00" },
    });
    // From the approval page (no caller, no key): the caps stored with the payment hold.
    const onPage = w.desk.resume({
      answer,
      wallet: w.user,
      via: "page",
      signal: new AbortController().signal,
    });
    await expect(onPage).rejects.toMatchObject({ code: "limit_exceeded", details: { limit: "daily" } });
    expect((await w.ledger.get(asked.paymentId ?? ""))?.status).toBe("awaiting_approval");
    expect(w.chain.transactions()).toHaveLength(2);
  });

  it("pays only from the key's wallets: another is refused before the service is asked", async () => {
    const grant = { wallets: [w.user.address] };
    const out = await face.pay(session(grant), weather("Paris"));
    expect(out).toMatchObject({
      status: "refused",
      error: { code: "limit_exceeded", limit: "wallets", wallet: w.held.address },
    });
    expect(await face.quote(session(grant), weather("Paris"))).toMatchObject({
      ok: false,
      error: { code: "limit_exceeded" },
    });
    expect(w.service.calls).toHaveLength(0);
    // Asked from an allowed wallet, then answered by a key that may no longer pay from it.
    const asked = await face.pay(session(grant, { wallet: w.user }), weather("Paris"));
    expect(asked).toMatchObject({ status: "awaiting_approval" });
    const refused = face.takeUpApproval({
      answer: await signedAnswer(asked.paymentId ?? ""),
      payer: { wallet: w.user, caller: KEY, scopeId: "s", grant: { name: KEY, wallets: [w.held.address] } },
      signal: new AbortController().signal,
    });
    await expect(refused).rejects.toMatchObject({ code: "limit_exceeded", details: { limit: "wallets" } });
  });

  it("without a key a request's limits apply up to the service's caps", async () => {
    const free = session({}, { spendingLimits: { perTransaction: 50n * USD } });
    const { grant: _grant, ...keyless } = free;
    expect(await face.budget(keyless)).toMatchObject({ limits: { perTransactionUsd: "50.00" } });
    expect((await face.budget(keyless)).key).toBeUndefined();
  });
});

/** The user's wallet signs what it was asked for this payment. */
async function signedAnswer(paymentId: string): Promise<ValidatedApproval> {
  const stored = (await w.ledger.get(paymentId))?.approval as StoredApproval;
  if (stored.sign.kind !== "evm-typed-data") throw new Error("not typed data");
  const authorization = stored.sign.typedData.message as unknown as ToyAuthorization;
  return { paymentId, kind: "signature", signature: w.chain.sign(authorization) };
}
