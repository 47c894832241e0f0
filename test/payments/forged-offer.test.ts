/**
 * A paid service's 402 names, besides the price, how to sign: the token's EIP-712 domain on an
 * EVM chain, a recent blockhash on Solana. The x402 SDK signs with them as given. A hostile service
 * (the loopback proxy of approval-attack.ts in front of the devnet's weather service) that names
 * another domain would get a signature the token never accepts, and one that names a stale
 * blockhash a transaction that cannot land: either way the budget stayed held for the window.
 * Found by black-box runs.
 */
import { describe, expect, it } from "vitest";
import { booted, devnet, payThroughProxy, proxy, useApprovalAttack } from "./approval-attack.js";
import { evmBalances, priceOf, serviceUrl, solanaBalances } from "./harness.js";

useApprovalAttack();

type Offer = { network: string; extra?: Record<string, unknown> };

/** The devnet weather service's real 402, its offers changed by `change`, as the proxy's answer. */
function forgedProbe(change: (offer: Offer) => void) {
  return async () => {
    const upstream = await fetch(`${serviceUrl(devnet, "weather")}?city=Paris`);
    const header = upstream.headers.get("payment-required");
    if (upstream.status !== 402 || !header) throw new Error("the weather service asked no payment");
    const required = JSON.parse(Buffer.from(header, "base64").toString("utf8")) as { accepts: Offer[] };
    for (const offer of required.accepts) change(offer);
    return {
      status: 402,
      headers: {
        "content-type": "application/json",
        "payment-required": Buffer.from(JSON.stringify(required)).toString("base64"),
      },
      body: "{}",
    };
  };
}

describe("a paid service that forges how to sign", () => {
  it("EVM: an EIP-712 domain other than the token's is not signed; nothing held, sent or moved", async () => {
    proxy.reset();
    proxy.onProbe = forgedProbe((offer) => {
      if (offer.network.startsWith("eip155:")) offer.extra = { ...offer.extra, name: "USD Coin (fake)" };
    });
    const before = await evmBalances(devnet);
    const { result, rows } = await payThroughProxy("evm");
    expect(result.finish.finishReason).toBe("payment-failed");
    expect(result.payments.map((p) => p.status)).not.toContain("signed");
    expect(result.payments.at(-1)).toMatchObject({ status: "failed", reason: "signing_failed" });
    expect(rows.filter((row) => row.status !== "failed")).toEqual([]);
    expect(proxy.paid).toBe(0);
    expect(await evmBalances(devnet)).toEqual(before);
  });

  it("EVM: the token's own domain, written as the service sends it, is paid", async () => {
    proxy.reset();
    proxy.onProbe = forgedProbe(() => {});
    const before = await evmBalances(devnet);
    const { result } = await payThroughProxy("evm");
    expect(result.finish.finishReason).toBe("payment-complete");
    const after = await evmBalances(devnet);
    expect(before.payer - after.payer).toBe(priceOf(devnet, "weather"));
  });

  // Found by a black-box run: the row kept the capitals, and viem refused them at every
  // reconciliation ("Address ... is invalid"), so an unclear payment never resolved.
  it("EVM: the allowed token spelt in capitals is paid, and its unclear payment is resolved on chain", async () => {
    proxy.reset();
    proxy.onProbe = forgedProbe((offer) => {
      if (offer.network.startsWith("eip155:"))
        (offer as { asset?: string }).asset = `0x${String((offer as { asset?: string }).asset)
          .slice(2)
          .toUpperCase()}`;
    });
    // The seller takes the signed payment and answers 500 without settling it: unclear.
    proxy.onPaid = async () => ({ status: 500, body: "{}" });
    const { result, rows } = await payThroughProxy("evm");
    expect(result.finish.finishReason).toBe("payment-unclear");
    const [row] = rows;
    if (!row) throw new Error("no payment row");
    const reconciler = booted.running.payments?.reconciler;
    if (!reconciler) throw new Error("payments are off");
    // Read on chain without an error: unused and within its window, it is still pending.
    const resolved = await reconciler.resolve(row.paymentId);
    expect(resolved?.status).toBe("unknown");
  });

  it("Solana: a blockhash the chain never issued is not used; the payment lands, paid once", async () => {
    proxy.reset();
    const invented = "US517G5965aydkZ46HS38QLi7UQiSojurfbQfKCELFx";
    proxy.onProbe = forgedProbe((offer) => {
      if (offer.network.startsWith("solana:"))
        offer.extra = { ...offer.extra, recentBlockhash: invented, lastValidBlockHeight: "999999999" };
    });
    const before = await solanaBalances(devnet);
    const { result, rows } = await payThroughProxy("solana");
    expect(result.finish.finishReason).toBe("payment-complete");
    expect(rows.map((row) => row.status)).toEqual(["settled"]);
    const after = await solanaBalances(devnet);
    expect(before.payer - after.payer).toBe(priceOf(devnet, "weather"));
  });
});
