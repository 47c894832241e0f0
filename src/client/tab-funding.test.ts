import {
  type Address,
  address,
  createNoopSigner,
  generateKeyPairSigner,
  type Instruction,
} from "@solana/kit";
import { getTransferSolInstruction } from "@solana-program/system";
import {
  getCreateAssociatedTokenIdempotentInstruction,
  getTransferCheckedInstruction,
  TOKEN_PROGRAM_ADDRESS,
} from "@solana-program/token";
import { describe, expect, it } from "vitest";
import type { SolanaRpc } from "../chains/svm-history.js";
import { svmOwnTransfers } from "../chains/svm-transfers.js";
import type { TabOpened } from "../protocol/tab-types.js";
import { checkSolanaFunding } from "./tab-funding.js";
import { DEVNET_USDC, newAddress, tokenAccount, wireTransaction } from "./testing/solana.js";

/**
 * The client's check of a Solana tab's funding before the wallet signs it: what the service builds
 * passes; a funding that moves another amount, pays someone else, sends the session key too much
 * SOL, calls another program or is paid for by another fee payer is refused, unsigned.
 */

const MINT = DEVNET_USDC;
const AMOUNT = 50_000n;

async function parties() {
  const wallet = createNoopSigner(await newAddress());
  const session = await newAddress();
  const thief = await newAddress();
  const ata = (owner: string) => tokenAccount(owner, MINT);
  return { wallet, session, thief, source: await ata(wallet.address), target: await ata(session), ata };
}

type Parties = Awaited<ReturnType<typeof parties>>;

/** The funding's instructions as the service builds them (src/chains/svm-transfers.ts), changed by `change`. */
function instructions(
  p: Parties,
  change: { amount?: bigint; lamports?: bigint; to?: typeof p.target; mint?: Address } = {},
) {
  return [
    getCreateAssociatedTokenIdempotentInstruction({
      payer: p.wallet,
      ata: p.target,
      owner: p.session,
      mint: MINT,
    }),
    getTransferCheckedInstruction({
      source: p.source,
      mint: change.mint ?? MINT,
      destination: change.to ?? p.target,
      authority: p.wallet,
      amount: change.amount ?? AMOUNT,
      decimals: 6,
    }),
    getTransferSolInstruction({
      source: p.wallet,
      destination: p.session,
      amount: change.lamports ?? 895_880n,
    }),
  ] as Instruction[];
}

async function opening(p: Parties, ixs: Instruction[], feePayer = p.wallet): Promise<TabOpened> {
  const transaction = await wireTransaction(feePayer.address, ixs);
  return {
    wallet: p.wallet.address,
    network: "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1",
    session: p.session,
    amount: { atomic: AMOUNT.toString(), usd: "0.05" },
    sign: { kind: "solana-transaction", method: "signTransaction", transaction },
  } as unknown as TabOpened;
}

/**
 * The service's own builder (src/chains/svm-transfers.ts) over an RPC that answers its three reads:
 * the mint (owned by the token program, 6 decimals), the rent minimum and a blockhash.
 */
async function builtByService(p: Parties): Promise<TabOpened> {
  const answer = (value: unknown) => ({ send: async () => value });
  const mint = new Uint8Array(82);
  mint[44] = 6;
  const blockhash = (await generateKeyPairSigner()).address;
  const rpc = {
    getAccountInfo: () =>
      answer({
        value: { owner: TOKEN_PROGRAM_ADDRESS, data: [Buffer.from(mint).toString("base64"), "base64"] },
      }),
    getMinimumBalanceForRentExemption: () => answer(890_880n),
    getLatestBlockhash: () => answer({ value: { blockhash, lastValidBlockHeight: 1n } }),
  } as unknown as SolanaRpc;
  const transaction = await svmOwnTransfers(rpc).funding(p.wallet.address, p.session, MINT, AMOUNT, "tab_x");
  const sign = { kind: "solana-transaction", method: "signTransaction", transaction };
  return { ...(await opening(p, [])), sign } as TabOpened;
}

describe("checking a Solana tab's funding before signing", () => {
  it("passes the funding the service builds (its own builder), and what this file builds like it", async () => {
    const p = await parties();
    await expect(checkSolanaFunding(await builtByService(p))).resolves.toBeUndefined();
    await expect(checkSolanaFunding(await opening(p, instructions(p)))).resolves.toBeUndefined();
  });

  it("refuses another amount, another payee, too much SOL, another program, another fee payer", async () => {
    const p = await parties();
    const refused = async (ixs: Instruction[], feePayer = p.wallet) =>
      expect(checkSolanaFunding(await opening(p, ixs, feePayer))).rejects.toThrow(/nothing was signed/);
    await refused(instructions(p, { amount: AMOUNT * 2n }));
    await refused(instructions(p, { to: await p.ata(p.thief) }));
    await refused(instructions(p, { lamports: 2_000_000_000n }));
    // Many small transfers are as many as one large one.
    const small = getTransferSolInstruction({ source: p.wallet, destination: p.session, amount: 9_000_000n });
    await refused([...instructions(p), small, small]);
    await refused([
      ...instructions(p),
      getTransferSolInstruction({ source: p.wallet, destination: p.thief, amount: 1n }),
    ]);
    await refused([
      ...instructions(p),
      { programAddress: address("Stake11111111111111111111111111111111111111") },
    ]);
    await refused(instructions(p), createNoopSigner(p.session));
  });

  it("refuses a funding in another token than the network's USDC", async () => {
    const p = await parties();
    const other = (await generateKeyPairSigner()).address;
    const opened = await opening(p, instructions(p, { mint: other }));
    await expect(checkSolanaFunding(opened)).rejects.toThrow(`moves the token ${other}, not USDC`);
  });
});
