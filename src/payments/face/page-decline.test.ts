import { describe, expect, it } from "vitest";
import { type ChainConnection, ChainUnreadable } from "../../chains/index.js";
import type { WalletChecks } from "../../chains/types.js";
import { AppError } from "../../errors/index.js";
import type { PaymentRecord } from "../ports/index.js";
import { checkDecline, declineRequest } from "./page-decline.js";

/** A decline on the page is proven by the payment's own wallet: its signature of a message naming the payment. */

const WALLET = "0x976EA74026E726554dB657fA54763abd0C3a0aa9";
const record = {
  paymentId: "pay_0b0e2e8c-5b7e-4a53-9d2f-6a7a1f0c9d11",
  network: "eip155:8453",
  wallet: WALLET,
} as PaymentRecord;
const GOOD = `0x${"ab".repeat(65)}` as const;

/** A chain whose wallet check accepts GOOD by WALLET over exactly `record`'s decline message. */
function chainsWith(verify: WalletChecks["verifyTypedData"]) {
  const seen: unknown[] = [];
  const wallets = {
    verifyTypedData: async (...args: Parameters<WalletChecks["verifyTypedData"]>) => {
      seen.push(args);
      return verify(...args);
    },
  } as WalletChecks;
  return { chains: { connection: () => ({ wallets }) as unknown as ChainConnection }, seen };
}

async function codeOf(promise: Promise<unknown>): Promise<string | undefined> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  return error instanceof AppError ? error.code : error === undefined ? undefined : String(error);
}

describe("declining on the page", () => {
  it("asks the wallet to sign a message naming the payment and the wallet, on the payment's chain", () => {
    const request = declineRequest(record);
    expect(request?.typedData).toMatchObject({
      domain: { chainId: 8453 },
      primaryType: "DeclinePayment",
      message: { paymentId: record.paymentId, wallet: WALLET },
    });
    expect(declineRequest({ ...record, network: "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1" })).toBeUndefined();
  });

  it("accepts only the wallet's signature over that message, as the chain judges it", async () => {
    const { chains, seen } = chainsWith(
      async (typedData, signature, wallet) =>
        signature === GOOD && wallet === WALLET && typedData.message.paymentId === record.paymentId,
    );
    expect(await codeOf(checkDecline(chains, record, GOOD))).toBeUndefined();
    expect(seen[0]).toEqual([declineRequest(record)?.typedData, GOOD, WALLET]);
    expect(await codeOf(checkDecline(chains, record, `0x${"cd".repeat(65)}`))).toBe("approval_invalid");
    expect(await codeOf(checkDecline(chains, record, undefined))).toBe("approval_invalid");
    // Another payment's decline, even by the same wallet, declines nothing here.
    expect(await codeOf(checkDecline(chains, { ...record, paymentId: "pay_other" }, GOOD))).toBe(
      "approval_invalid",
    );
  });

  it("decides nothing when the chain cannot be read, and refuses a chain without the check", async () => {
    const { chains } = chainsWith(async () => {
      throw new ChainUnreadable("no answer");
    });
    expect(await codeOf(checkDecline(chains, record, GOOD))).toBe("payment_failed");
    const none = { connection: () => undefined };
    expect(await codeOf(checkDecline(none, record, GOOD))).toBe("approval_invalid");
    expect(await codeOf(checkDecline(chains, { ...record, network: "solana:x" }, GOOD))).toBe(
      "approval_invalid",
    );
  });
});
