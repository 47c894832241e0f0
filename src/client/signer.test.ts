import {
  address,
  createNoopSigner,
  generateKeyPairSigner,
  getBase64EncodedWireTransaction,
  getBase64Encoder,
  getTransactionDecoder,
  partiallySignTransaction,
} from "@solana/kit";
import { getTransferCheckedInstruction } from "@solana-program/token";
import { describe, expect, it } from "vitest";
import { signApproval } from "./signer.js";
import { DEVNET_USDC, tokenAccount, wireTransaction } from "./testing/solana.js";
import type { AwaitingUpdate } from "./tool-parts.js";

/** The transport's signer with a Solana signing function: what the wallet returns is checked before it is sent. */

const HASHES = [
  "4vJ9JU1bJJE96FWSJKvHsmmFADCg4gpZQff4P3bkLKi",
  "EtWTRABZaYq6iMfeYKouRu166VU2xqa1wcSmmRUSzhpE",
];

const PAYEE = address("9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin");

/**
 * A wire transaction as the service sends it (an x402 payment of 0.01 USDC to the payee): the fee
 * payer (the facilitator) and the wallet sign; no signatures yet.
 */
async function paymentTransaction(
  wallet: string,
  feePayer: string,
  hash = HASHES[0] as string,
): Promise<string> {
  const transfer = getTransferCheckedInstruction({
    source: await tokenAccount(wallet),
    mint: DEVNET_USDC,
    destination: await tokenAccount(PAYEE),
    authority: createNoopSigner(address(wallet)),
    amount: 10_000n,
    decimals: 6,
  });
  return wireTransaction(feePayer, [transfer], hash);
}

function update(wallet: string, transaction: string): AwaitingUpdate {
  return {
    paymentId: "pay_sol",
    status: "awaiting_approval",
    service: { url: "http://127.0.0.1:4021/weather" },
    amount: { atomic: "10000", usd: "0.01" },
    network: "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1",
    payTo: PAYEE,
    approval: {
      wallet,
      expiresAt: "2026-11-25T10:00:50.000Z",
      sign: { kind: "solana-transaction", method: "signTransaction", transaction },
    },
  };
}

const decode = (base64: string) => getTransactionDecoder().decode(getBase64Encoder().encode(base64));

describe("signApproval with a Solana signing function", () => {
  it("sends what the wallet signed: the same message with the wallet's signature", async () => {
    const [wallet, facilitator] = await Promise.all([generateKeyPairSigner(), generateKeyPairSigner()]);
    const asked = update(wallet.address, await paymentTransaction(wallet.address, facilitator.address));
    const given: string[] = [];
    const answer = await signApproval(
      {
        solana: async (transaction) => {
          given.push(transaction);
          const signed = await partiallySignTransaction([wallet.keyPair], decode(transaction));
          return getBase64EncodedWireTransaction(signed);
        },
      },
      asked,
    );
    expect(given).toEqual([
      asked.approval.sign.kind === "solana-transaction" && asked.approval.sign.transaction,
    ]);
    if (!("transaction" in answer)) throw new Error("no transaction");
    expect(answer.paymentId).toBe("pay_sol");
    expect(decode(answer.transaction).signatures[wallet.address]).toBeTruthy();
  });

  it("refuses a transaction whose message the wallet changed, and one the wallet did not sign", async () => {
    const [wallet, facilitator] = await Promise.all([generateKeyPairSigner(), generateKeyPairSigner()]);
    const asked = update(wallet.address, await paymentTransaction(wallet.address, facilitator.address));
    const other = await paymentTransaction(wallet.address, facilitator.address, HASHES[1]);
    const changed = async () =>
      getBase64EncodedWireTransaction(await partiallySignTransaction([wallet.keyPair], decode(other)));
    await expect(signApproval({ solana: changed }, asked)).rejects.toThrow(/changed the transaction/);
    const unsigned = async (transaction: string) => transaction;
    await expect(signApproval({ solana: unsigned }, asked)).rejects.toThrow(/no signature of/);
  });

  it("refuses without a wallet for the payment's chain", async () => {
    const [wallet, facilitator] = await Promise.all([generateKeyPairSigner(), generateKeyPairSigner()]);
    const asked = update(wallet.address, await paymentTransaction(wallet.address, facilitator.address));
    await expect(signApproval({ evm: { request: async () => "0x00" } }, asked)).rejects.toThrow(
      /No Solana wallet was given/,
    );
  });
});
