import { type Address, address, createNoopSigner, type Instruction } from "@solana/kit";
import { getTransferSolInstruction } from "@solana-program/system";
import { getTransferCheckedInstruction } from "@solana-program/token";
import { describe, expect, it } from "vitest";
import type { PaymentUpdate } from "../protocol/stream.js";
import { signApproval } from "./signer.js";
import { checkSolanaApproval } from "./solana-payment.js";
import { DEVNET_USDC, newAddress, tokenAccount, wireTransaction } from "./testing/solana.js";

/**
 * The client's check of a Solana payment's transaction before the wallet signs it: the transaction
 * an x402 payment is (compute budget, one `TransferChecked` into the payee's token account, a memo;
 * the facilitator pays the fee) passes; one that moves another token, another amount, pays someone
 * else, makes the wallet pay the fee or calls another program is refused, and nothing is signed.
 */

const DEVNET = "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1";
const USDC = DEVNET_USDC;
const AMOUNT = 10_000n;
const COMPUTE_BUDGET = address("ComputeBudget111111111111111111111111111111");
const MEMO = address("MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr");

async function parties() {
  const wallet = createNoopSigner(await newAddress());
  const facilitator = createNoopSigner(await newAddress());
  const payee = await newAddress();
  const thief = await newAddress();
  return { wallet, facilitator, payee, thief, ata: tokenAccount, otherMint: await newAddress() };
}

type Parties = Awaited<ReturnType<typeof parties>>;

/** The instructions of an x402 `exact` payment as the x402 SDK builds them, changed by `change`. */
async function payment(p: Parties, change: { amount?: bigint; to?: string; mint?: Address } = {}) {
  const mint = change.mint ?? USDC;
  const limit = new Uint8Array([2, 0x40, 0x0d, 0x03, 0x00]); // SetComputeUnitLimit(200_000)
  const price = new Uint8Array([3, 1, 0, 0, 0, 0, 0, 0, 0]); // SetComputeUnitPrice(1)
  return [
    { programAddress: COMPUTE_BUDGET, data: limit },
    { programAddress: COMPUTE_BUDGET, data: price },
    getTransferCheckedInstruction({
      source: await p.ata(p.wallet.address, mint),
      mint,
      destination: change.to ? address(change.to) : await p.ata(p.payee, mint),
      authority: p.wallet,
      amount: change.amount ?? AMOUNT,
      decimals: 6,
    }),
    { programAddress: MEMO, data: new TextEncoder().encode("0123456789abcdef") },
  ] as Instruction[];
}

async function awaiting(p: Parties, ixs: Instruction[], feePayer = p.facilitator, network = DEVNET) {
  const transaction = await wireTransaction(feePayer.address, ixs);
  return {
    paymentId: "pay_1",
    status: "awaiting_approval",
    service: { url: "http://127.0.0.1:4021/weather", name: "Weather" },
    amount: { atomic: AMOUNT.toString(), usd: "0.01" },
    network,
    payTo: p.payee,
    approval: {
      wallet: p.wallet.address,
      expiresAt: "2026-11-28T10:00:50.000Z",
      sign: { kind: "solana-transaction", method: "signTransaction", transaction },
    },
  } as PaymentUpdate & { approval: NonNullable<PaymentUpdate["approval"]> };
}

describe("checking a Solana payment's transaction before signing", () => {
  it("passes the transaction of an x402 payment of the quoted amount to the payee", async () => {
    const p = await parties();
    expect(await checkSolanaApproval(await awaiting(p, await payment(p)))).toEqual([]);
  });

  it("refuses another token, amount or payee, the wallet as fee payer, another program", async () => {
    const p = await parties();
    const says = async (ixs: Instruction[], feePayer = p.facilitator) =>
      (await checkSolanaApproval(await awaiting(p, ixs, feePayer))).join("; ");
    expect(await says(await payment(p, { mint: p.otherMint }))).toMatch(/not USDC/);
    expect(await says(await payment(p, { amount: AMOUNT * 100n }))).toMatch(
      /moves 1000000 units, the quote says 10000/,
    );
    expect(await says(await payment(p, { to: await p.ata(p.thief) }))).toMatch(/not the token account of/);
    expect(await says(await payment(p), p.wallet)).toMatch(/pay the transaction's fee/);
    const drain = getTransferSolInstruction({ source: p.wallet, destination: address(p.thief), amount: 1n });
    expect(await says([...(await payment(p)), drain])).toMatch(/calls a program a payment does not/);
    const twice = await payment(p);
    expect(await says([...twice, twice[2] as Instruction])).toMatch(/exactly once/);
  });

  it("on a network with no known USDC checks all but the token", async () => {
    const p = await parties();
    const other = await awaiting(
      p,
      await payment(p, { mint: p.otherMint }),
      p.facilitator,
      "solana:localnet",
    );
    expect(await checkSolanaApproval(other)).toEqual([]);
    const more = await awaiting(p, await payment(p, { amount: 1n }), p.facilitator, "solana:localnet");
    expect(await checkSolanaApproval(more)).toEqual(["moves 1 units, the quote says 10000"]);
  });

  it("signApproval never hands a refused transaction to the wallet", async () => {
    const p = await parties();
    let asked = 0;
    const signer = async () => {
      asked += 1;
      return { paymentId: "pay_1", transaction: "AA==" };
    };
    const refused = await awaiting(p, await payment(p, { mint: p.otherMint }));
    await expect(signApproval(signer, refused)).rejects.toMatchObject({ mismatch: true });
    expect(asked).toBe(0);
    await signApproval(signer, await awaiting(p, await payment(p)));
    expect(asked).toBe(1);
  });
});
