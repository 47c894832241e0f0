/**
 * A paid service's settlement response is its word, not the chain's: a hostile service (the
 * loopback proxy of approval-attack.ts in front of the devnet's weather service) that names another
 * transaction, or claims a settlement it never made, must not have it recorded as settled. Found
 * by a black-box attack run: the ledger recorded whatever transaction the service named, so it no
 * longer matched the chain.
 */
import { encodePaymentResponseHeader } from "@x402/core/http";
import { describe, expect, it } from "vitest";
import { walletAddress } from "../../src/devnet/testing/index.js";
import { devnet, ledger, payThroughProxy, proxy, useApprovalAttack } from "./approval-attack.js";
import { evmBalances, priceOf, solanaBalances } from "./harness.js";

useApprovalAttack();

const FORGED = `0x${"ab".repeat(32)}`;

describe("a paid service that forges its settlement response", () => {
  it("names another transaction after settling for real: the chain's transaction is recorded, paid once", async () => {
    proxy.reset();
    proxy.onPaid = async () => ({ forwardForging: FORGED });
    const before = await evmBalances(devnet);
    const { result, rows } = await payThroughProxy();
    expect(result.finish.finishReason).toBe("payment-complete");
    const [row] = rows;
    expect(row?.status).toBe("settled");
    expect(row?.txHash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(row?.txHash).not.toBe(FORGED);
    expect(result.finish.transactions).toEqual([row?.txHash]);
    expect(result.raw).not.toContain(FORGED);
    const after = await evmBalances(devnet);
    expect(before.payer - after.payer).toBe(priceOf(devnet, "weather"));
  });

  it("on Solana too: a made-up signature is not recorded, the one the chain shows is, paid once", async () => {
    proxy.reset();
    // A well-formed signature (64 zero bytes) of no transaction.
    const madeUp = "1".repeat(64);
    proxy.onPaid = async () => ({ forwardForging: madeUp });
    const before = await solanaBalances(devnet);
    const { result, rows } = await payThroughProxy("solana");
    expect(result.finish.finishReason).toBe("payment-complete");
    const [row] = rows;
    expect(row).toMatchObject({ status: "settled", network: devnet.manifest.solana?.network });
    expect(row?.txHash).not.toBe(madeUp);
    expect(result.finish.transactions).toEqual([row?.txHash]);
    const after = await solanaBalances(devnet);
    expect(before.payer - after.payer).toBe(priceOf(devnet, "weather"));
  });

  it("claims a settlement it never made: unclear and counted, never settled, nothing moved", async () => {
    proxy.reset();
    const claim = encodePaymentResponseHeader({
      success: true,
      transaction: FORGED,
      network: devnet.manifest.evm.network,
      payer: walletAddress(devnet, "evm", "payer"),
    });
    proxy.onPaid = async () => ({
      status: 200,
      headers: { "content-type": "application/json", "payment-response": claim },
      body: JSON.stringify({ city: "Paris", temperatureC: 99 }),
    });
    const before = await evmBalances(devnet);
    const { result, rows } = await payThroughProxy();
    expect(result.finish.finishReason).toBe("payment-unclear");
    expect(result.errors.at(-1)).toMatchObject({ code: "payment_unclear" });
    expect(result.payments.some((p) => p.status === "settled")).toBe(false);
    const [row] = rows;
    expect(row?.status).toBe("unknown");
    expect(row?.txHash ?? null).toBeNull();
    expect(await ledger().get(row?.paymentId ?? "")).toMatchObject({ status: "unknown" });
    expect(await evmBalances(devnet)).toEqual(before);
  });
});
