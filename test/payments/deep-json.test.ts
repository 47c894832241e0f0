/**
 * A hostile paid service's JSON nested thousands deep (a few KB; within every size bound): found by
 * a black-box run, it overflowed the stack of the walk that cleans what the model reads. The
 * payment had settled, yet the turn ended `internal` (server key), `model_error` "Try again"
 * (approval resumed in chat: an invitation to pay twice), or HTTP 500 on the approval endpoint; a
 * 402 nested as deep failed `internal` at the reservation. The loopback proxy of approval-attack.ts
 * stands in front of the devnet's weather service.
 */
import { describe, expect, it } from "vitest";
import {
  askViaProxy,
  devnet,
  evmUser,
  payThroughProxy,
  post,
  proxy,
  resumeBody,
  signEvm,
  useApprovalAttack,
} from "./approval-attack.js";
import { evmBalances, priceOf, readChat, solanaBalances } from "./harness.js";

useApprovalAttack();

const DEEP = "[".repeat(50_000) + "]".repeat(50_000);

/** 28 KB of JSON nested 14,000 deep: inside every size bound (the answer is read up to 256 KiB). */
const DEEP_ANSWER = DEEP.slice(0, 14_000) + DEEP.slice(-14_000);

describe("a paid service whose answer nests thousands deep", () => {
  it("after a server-key payment: settled, paid once, the answer handed on as text", async () => {
    proxy.reset();
    proxy.onPaid = async () => ({ forwardThenBody: DEEP_ANSWER });
    const before = await evmBalances(devnet);
    const { result, rows } = await payThroughProxy();
    expect(result.errors.map((e) => e.code)).toEqual([]);
    expect(result.finish.finishReason).toBe("payment-complete");
    expect(rows.map((row) => row.status)).toEqual(["settled"]);
    const after = await evmBalances(devnet);
    expect(before.payer - after.payer).toBe(priceOf(devnet, "weather"));
  });
});

describe("a 402 whose offer nests thousands deep", () => {
  it("is not a demand this service can read: refused before anything is signed, no internal error", async () => {
    const solana = devnet.manifest.solana;
    const v1 = devnet.manifest.v1Services.find((s) => solana && s.networks.includes(solana.network));
    if (!solana || !v1) throw new Error("this test needs the devnet's v1 Solana service");
    proxy.reset();
    proxy.onProbe = async () => {
      // The devnet's real v1 offer (its 402 body), its `extra` holding a field nested 50,000 deep.
      const text = await (await fetch(`${v1.url}?city=Paris`)).text();
      const deep = `${"[".repeat(50_000)}${"]".repeat(50_000)}`;
      const body = text.replaceAll('"extra":{', `"extra":{"nested":${deep},`);
      if (body === text) throw new Error("the v1 offer has no extra to nest in");
      return { status: 402, headers: { "content-type": "application/json" }, body };
    };
    const before = await solanaBalances(devnet);
    const { result, rows } = await payThroughProxy("solana");
    expect(result.errors.map((e) => e.code)).not.toContain("internal");
    expect(result.finish.finishReason).not.toBe("error");
    expect(rows).toEqual([]);
    expect(await solanaBalances(devnet)).toEqual(before);
  });
});

describe("approved in the wallet, then answered nested thousands deep", () => {
  it("the resumed turn says the payment settled: never model_error, never 'try again'", async () => {
    proxy.reset();
    const { ask, message } = await askViaProxy();
    const signature = await signEvm(ask);
    const before = await evmBalances(devnet, "user");
    // The real service settles the payment; what reaches the agent is then replaced by the deep body.
    proxy.onPaid = async () => ({ forwardThenBody: DEEP_ANSWER });
    const result = await readChat(
      await post(resumeBody(evmUser, { paymentId: ask.paymentId, signature }, {}, message)),
    );
    expect(result.errors.map((e) => e.code)).not.toContain("model_error");
    expect(result.errors.map((e) => e.code)).not.toContain("internal");
    expect(result.payments.at(-1)?.status).toBe("settled");
    const after = await evmBalances(devnet, "user");
    expect(before.payer - after.payer).toBe(priceOf(devnet, "weather"));
  });
});
