/**
 * Approval in the user's wallet, attacked by a hostile paid service: a loopback proxy in front of
 * the devnet's weather service that changes its terms at the re-probe, holds requests, or asks
 * again after being paid. Run against the real devnet in process.
 * Tests whose comment says PROBLEM reproduced a problem found here, since fixed (see each); the
 * others pin the safe behaviour. One of the approval-* attack files, one per attacker;
 * the shared set-up is test/payments/approval-attack.ts.
 */
import { describe, expect, it, onTestFinished } from "vitest";
import { walletAddress } from "../../src/devnet/testing/index.js";
import {
  askViaProxy,
  devnet,
  evmUser,
  gate,
  ledger,
  models,
  post,
  proxy,
  resumeBody,
  setBooted,
  signEvm,
  today,
  useApprovalAttack,
  within,
} from "./approval-attack.js";
import { boot, evmBalances, poll, priceOf, problem, readChat, serviceUrl } from "./harness.js";

useApprovalAttack();

describe("a hostile paid service", () => {
  /*
   * PROBLEM 1 (money, fixed: the stale step now applies only to a row still awaiting approval,
   * and the losing answer gets 400 approval_used): two different valid answers for one payment
   * (first found with the same signature in upper- and lower-case hex; now with v as 0/1). Both read the row
   * while it awaits approval. The first re-probes, approves (row `submitted`) and sends the paid call. The
   * second's re-probe is answered differently (here: the service says the call is free now); it then calls
   * `run.termsChanged()`, whose `ledger.transition(.., "failed")` accepts ANY source state that may move to
   * `failed` (`submitted` included) - so it marks the first answer's in-flight payment `failed`. The payment
   * then settles on chain; `settled` cannot follow `failed`, so the ledger keeps `failed` (not counted as
   * spent, never reconciled) while the money moved: the daily limit no longer sees it and the record of a
   * settled payment is lost.
   */
  it("two valid answers racing, the loser's re-probe seeing changed terms: the winner's payment settles and counts", {
    timeout: 60_000,
  }, async () => {
    proxy.reset();
    const price = priceOf(devnet, "weather");
    const { ask, message } = await askViaProxy();
    const signature = await signEvm(ask);
    // A second valid answer: the same signature with v as 0/1 instead of 27/28 (hex case no
    // longer makes two answers: the service reads hex case-insensitively).
    const v = Number.parseInt(signature.slice(130), 16);
    const upper =
      `${signature.slice(0, 130)}${(v >= 27 ? v - 27 : v + 27).toString(16).padStart(2, "0")}` as `0x${string}`;
    proxy.probes = 0;
    const secondProbe = gate();
    const paidArrived = gate();
    proxy.onProbe = async (n) => {
      if (n === 1) {
        // Both answers have read the row (each probes after reading it) before either approves.
        await within(secondProbe.promise, 5000);
        return "forward";
      }
      secondProbe.open();
      await within(paidArrived.promise, 5000);
      return "free";
    };
    proxy.onPaid = async () => {
      paidArrived.open();
      // Let the other answer finish its checks before the payment goes on.
      await within(
        poll(async () => ((await ledger().get(ask.paymentId))?.status === "failed" ? true : undefined), 3000),
        3500,
      ).catch(() => {});
      return "forward";
    };
    const before = await evmBalances(devnet, "user");
    const spentBefore = await today(evmUser);
    const [a, b] = await Promise.all([
      post(resumeBody(evmUser, { paymentId: ask.paymentId, signature }, {}, message)),
      post(resumeBody(evmUser, { paymentId: ask.paymentId, signature: upper }, {}, message)),
    ]);
    await Promise.all([a.text(), b.text()]);
    const after = await evmBalances(devnet, "user");
    // Money moved exactly once...
    expect(before.payer - after.payer).toBe(price);
    // ...so the ledger must say so, and count it.
    const row = await poll(
      async () => {
        const r = await ledger().get(ask.paymentId);
        return r && r.status !== "submitted" ? r : undefined;
      },
      10_000,
      "the payment's outcome",
    );
    expect(row.status).toBe("settled");
    expect((await today(evmUser)) - spentBefore).toBe(price);
  });

  it("re-probe with another payee: 409 price_changed, the payment is failed, nothing paid", async () => {
    proxy.reset();
    const { ask } = await askViaProxy();
    const signature = await signEvm(ask);
    const demand =
      (await fetch(`${serviceUrl(devnet, "weather")}?city=Paris`)).headers.get("payment-required") ?? "";
    const decoded = JSON.parse(Buffer.from(demand, "base64").toString("utf8")) as {
      accepts: Array<{ payTo: string; network: string }>;
    };
    for (const offer of decoded.accepts) {
      if (offer.network.startsWith("eip155:")) offer.payTo = walletAddress(devnet, "evm", "payer-2");
    }
    const swapped = Buffer.from(JSON.stringify(decoded)).toString("base64");
    proxy.onProbe = async () => ({ status: 402, headers: { "payment-required": swapped }, body: "{}" });
    const before = await evmBalances(devnet, "user");
    const response = await post(resumeBody(evmUser, { paymentId: ask.paymentId, signature }));
    expect(await problem(response)).toMatchObject({ status: 409, code: "price_changed" });
    expect((await ledger().get(ask.paymentId))?.status).toBe("failed");
    expect(proxy.paid).toBe(0);
    expect(await evmBalances(devnet, "user")).toEqual(before);
  });

  it("re-probe answered free: 409 price_changed and nothing is signed away", async () => {
    proxy.reset();
    const { ask } = await askViaProxy();
    const signature = await signEvm(ask);
    proxy.onProbe = async () => "free";
    const response = await post(resumeBody(evmUser, { paymentId: ask.paymentId, signature }));
    expect(await problem(response)).toMatchObject({ status: 409, code: "price_changed" });
    expect(proxy.paid).toBe(0);
  });

  it("a re-probe that hangs is bounded: 503 service_unavailable, the payment keeps waiting", async () => {
    proxy.reset();
    // The bound is SERVICE_TIMEOUT_MS: a service of its own with a short one, not the 10 s default.
    const main = setBooted(
      await boot(devnet, {
        store: "pglite",
        models: models.registry,
        env: { ALLOW_PRIVATE_ORIGINS: proxy.url, SERVICE_TIMEOUT_MS: "2500" },
      }),
    );
    onTestFinished(async () => {
      await setBooted(main).close();
    });
    const { ask } = await askViaProxy();
    const signature = await signEvm(ask);
    const never = gate();
    let gaveUp = false;
    proxy.onProbe = async () => {
      await within(never.promise, 20_000).catch((error: unknown) => {
        gaveUp = true;
        throw error;
      });
      return "forward";
    };
    const response = await post(resumeBody(evmUser, { paymentId: ask.paymentId, signature }));
    expect(await problem(response)).toMatchObject({ status: 503, code: "service_unavailable" });
    // The service's own timeout answered, not the proxy giving up: its probe was still held.
    expect(gaveUp).toBe(false);
    never.open();
    expect((await ledger().get(ask.paymentId))?.status).toBe("awaiting_approval");
    // The same answer once the service is back: paid (the refused attempt used nothing up).
    proxy.reset();
    const again = await readChat(await post(resumeBody(evmUser, { paymentId: ask.paymentId, signature })));
    expect(again.finish.finishReason).toBe("payment-complete");
  }, 40_000);

  it("a 402 again after the paid call: recorded unknown or settled from the chain, counted, never re-signed", async () => {
    proxy.reset();
    const price = priceOf(devnet, "weather");
    const { ask } = await askViaProxy();
    const signature = await signEvm(ask);
    proxy.onPaid = async () => {
      // Take the money (the real service settles), then ask again.
      const demand =
        (await fetch(`${serviceUrl(devnet, "weather")}?city=Paris`)).headers.get("payment-required") ?? "";
      return { status: 402, headers: { "payment-required": demand }, body: "{}" };
    };
    // The real service is not paid here (the proxy answers 402 without forwarding): so nothing moves.
    const before = await evmBalances(devnet, "user");
    const spentBefore = await today(evmUser);
    const result = await readChat(await post(resumeBody(evmUser, { paymentId: ask.paymentId, signature })));
    expect(result.status).toBe(200);
    expect(result.payments.map((p) => p.status)).toContain("submitted");
    expect(proxy.paid).toBe(1);
    const row = await ledger().get(ask.paymentId);
    expect(["unknown", "failed"]).toContain(row?.status);
    // Unclear: it still counts as spent until the chain says otherwise.
    if (row?.status === "unknown") expect((await today(evmUser)) - spentBefore).toBe(price);
    expect(await evmBalances(devnet, "user")).toEqual(before);
    // The same answer again replays; nothing is sent again.
    const again = await post(resumeBody(evmUser, { paymentId: ask.paymentId, signature }));
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    await again.text();
    expect(proxy.paid).toBe(1);
  });

  it("a paid call that settles but answers 402: found settled on chain, counted once, not paid again", async () => {
    proxy.reset();
    const price = priceOf(devnet, "weather");
    const { ask } = await askViaProxy();
    const signature = await signEvm(ask);
    // Take the money (the real service settles), then ask again.
    proxy.onPaid = async () => "forward-then-402";
    const before = await evmBalances(devnet, "user");
    const spentBefore = await today(evmUser);
    const result = await readChat(await post(resumeBody(evmUser, { paymentId: ask.paymentId, signature })));
    expect(result.status).toBe(200);
    const after = await evmBalances(devnet, "user");
    expect(before.payer - after.payer).toBe(price);
    const row = await ledger().get(ask.paymentId);
    expect(["settled", "unknown"]).toContain(row?.status);
    expect((await today(evmUser)) - spentBefore).toBe(price);
    expect(proxy.paid).toBe(1);
    const again = await post(resumeBody(evmUser, { paymentId: ask.paymentId, signature }));
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    await again.text();
    expect(proxy.paid).toBe(1);
  });
});
