/**
 * docs/payments.md#quote-ids: the payments face pays by quote id on the real devnet and the real store. Two
 * service instances that share QUOTE_SECRET and a PostgreSQL ledger (one instance with PGlite):
 * an id quoted on one pays on either, exactly once however many calls race, and the ledger equals
 * the chain; the session's limits still refuse it, and an altered id pays nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { walletAddress } from "../../src/devnet/testing/index.js";
import type { PayerSession, PaymentsFace } from "../../src/payments/face.js";
import {
  type Booted,
  boot,
  dropSchema,
  evmBalances,
  ledgerOf,
  priceOf,
  STORES,
  type StoreKind,
  serviceUrl,
  useTestDevnet,
} from "./harness.js";

const devnet = useTestDevnet();
const SECRET = "quote-secret-for-tests-0123456789abcdef";

describe.each(STORES)("paying by quote id (%s)", (store: StoreKind) => {
  let a: Booted;
  let b: Booted;
  beforeAll(async () => {
    a = await boot(devnet, { store, env: { QUOTE_SECRET: SECRET } });
    b =
      store === "postgres"
        ? await boot(devnet, { store, schema: a.schema ?? "", env: { QUOTE_SECRET: SECRET } })
        : a;
  });
  afterAll(async () => {
    if (b && b !== a) await b.close();
    await a?.close();
    await dropSchema(a?.schema);
  });

  const faceOf = (booted: Booted): PaymentsFace => {
    const payments = booted.running.payments;
    if (!payments) throw new Error("payments are off");
    return payments.face;
  };
  let scopes = 0;
  const session = (over: Partial<PayerSession> = {}): PayerSession => ({
    caller: "devnet",
    bearerToken: devnet.manifest.devToken,
    wallet: { chain: "evm", address: walletAddress(devnet, "evm", "payer") },
    scopeId: `quote_scope_${++scopes}`,
    signal: new AbortController().signal,
    deadline: a.clock.now().getTime() + 30_000,
    ...over,
  });
  const weather = () => ({ url: serviceUrl(devnet, "weather"), query: { city: "Paris" } });

  async function quoteId(): Promise<string> {
    const quote = await faceOf(a).quote(session(), weather());
    expect(quote).toMatchObject({ ok: true, paymentRequired: true, needsApproval: false });
    if (!quote.quoteId) throw new Error(`no quote id: ${JSON.stringify(quote)}`);
    return quote.quoteId;
  }

  it("an id quoted on one instance pays once, on either, however many calls race; ledger = chain", async () => {
    const id = await quoteId();
    const before = await evmBalances(devnet);
    const outputs = await Promise.all([
      faceOf(a).pay(session(), { quoteId: id }),
      faceOf(a).pay(session(), { quoteId: id }),
      faceOf(b).pay(session(), { quoteId: id }),
      faceOf(b).pay(session(), { quoteId: id }),
    ]);
    const ids = new Set(outputs.map((o) => o.paymentId));
    expect(ids.size).toBe(1);
    // Every caller hears what the one payment came to, the race's losers included (found by a
    // black-box run: a loser on the other instance read the winner's row mid-way, "unknown").
    expect(outputs.map((o) => o.status)).toEqual(["paid", "paid", "paid", "paid"]);
    const paymentId = [...ids][0] ?? "";
    // Read back later, on the other instance: the same payment, nothing paid again.
    expect(await faceOf(b).pay(session(), { quoteId: id })).toMatchObject({ status: "paid", paymentId });
    const after = await evmBalances(devnet);
    const price = priceOf(devnet, "weather");
    expect(before.payer - after.payer).toBe(price);
    expect(after.merchant - before.merchant).toBe(price);
    const row = await ledgerOf(a.running).get(paymentId);
    expect(row).toMatchObject({ status: "settled", amount: price, caller: "devnet" });
    expect(await faceOf(b).getPayment("devnet", paymentId)).toMatchObject({
      status: "settled",
      serviceName: "Weather now",
    });
    // Listed by the service's name (discovery's, as the quote showed it), though a server key's
    // row keeps none: only an approval stores it.
    const listed = await faceOf(b).listPayments({ caller: "devnet", limit: 100 });
    expect(listed.items.find((item) => item.paymentId === paymentId)).toMatchObject({
      serviceName: "Weather now",
    });
    expect(await faceOf(b).getPayment("someone-else", paymentId)).toBeUndefined();
  });

  it("the session's limits refuse it with the chat's code; an altered id pays nothing", async () => {
    const id = await quoteId();
    const before = await evmBalances(devnet);
    const tight = session({ spendingLimits: { perTransaction: priceOf(devnet, "weather") - 1n } });
    expect(await faceOf(b).pay(tight, { quoteId: id })).toMatchObject({
      status: "refused",
      error: { code: "limit_exceeded", limit: "perTransaction" },
    });
    const [prefix, payload = "", signature] = id.split(".");
    const claims = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"));
    claims.amount = "1";
    const altered = `${prefix}.${Buffer.from(JSON.stringify(claims)).toString("base64url")}.${signature}`;
    expect(await faceOf(b).pay(session(), { quoteId: altered })).toMatchObject({
      status: "refused",
      error: { code: "quote_invalid" },
    });
    expect(await evmBalances(devnet)).toEqual(before);
  });
});
