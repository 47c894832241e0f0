import type { PaymentUpdate } from "../protocol/stream.js";
import { notUsdc } from "../protocol/usdc.js";
import {
  associatedTokenAccount,
  COMPUTE_BUDGET_PROGRAM,
  type DecodedInstruction,
  decodeSolanaMessage,
  MEMO_PROGRAM,
  TOKEN_PROGRAMS,
  TRANSFER_CHECKED,
  u64,
} from "./solana-message.js";

/**
 * Where a Solana payment's transaction moves something else than its update says, before the wallet
 * signs it: what describeApproval checks of EVM typed data, for the transaction an x402 payment is
 * (compute budget, one `TransferChecked`, a memo; the facilitator pays the fee). Empty when it agrees.
 *
 * - the wallet is not the fee payer (a fee payer's compute price could take its SOL);
 * - no program but the compute budget, the token programs and the memo;
 * - exactly one token instruction, a `TransferChecked` of the update's amount, from the wallet, of
 *   the network's USDC where it is known (src/protocol/usdc.ts), into the payee's token account.
 */
export async function checkSolanaApproval(update: PaymentUpdate): Promise<string[]> {
  const approval = update.approval;
  if (approval?.sign.kind !== "solana-transaction") return [];
  const wallet = approval.wallet;
  let decoded: Awaited<ReturnType<typeof decodeSolanaMessage>>;
  try {
    decoded = await decodeSolanaMessage(approval.sign.transaction);
  } catch {
    return ["the transaction cannot be read"];
  }
  const mismatches: string[] = [];
  if (decoded.feePayer === wallet) mismatches.push("makes your wallet pay the transaction's fee");
  if (decoded.usesLookupTables) mismatches.push("reads accounts from lookup tables");
  const transfers: DecodedInstruction[] = [];
  for (const ix of decoded.instructions) {
    if (ix.program === COMPUTE_BUDGET_PROGRAM || ix.program === MEMO_PROGRAM) continue;
    if (ix.program && TOKEN_PROGRAMS.has(ix.program)) transfers.push(ix);
    else mismatches.push(`calls a program a payment does not (${ix.program ?? "unknown"})`);
  }
  const [transfer, ...more] = transfers;
  if (!transfer || more.length > 0) return [...mismatches, "does not move tokens exactly once"];
  return [...mismatches, ...(await transferMismatches(update, wallet, transfer))];
}

async function transferMismatches(
  update: PaymentUpdate,
  wallet: string,
  { program, accounts, data }: DecodedInstruction,
): Promise<string[]> {
  if (data[0] !== TRANSFER_CHECKED || data.length < 10)
    return ["asks the token program for something else than a transfer"];
  const [, mint, destination, authority] = accounts;
  const out: string[] = [];
  if (authority !== wallet) out.push(`moves tokens of ${authority ?? "nobody"}, not the wallet ${wallet}`);
  const atomic = u64(data, 1).toString();
  if (atomic !== update.amount?.atomic)
    out.push(`moves ${atomic} units, the quote says ${update.amount?.atomic ?? "none"}`);
  if (update.network === undefined || !update.network.startsWith("solana:"))
    out.push(`the quote names no Solana network (${update.network ?? "none"})`);
  else if (mint) {
    const token = notUsdc(update.network, mint);
    if (token) out.push(token);
  }
  const payee = update.payTo;
  const expected =
    payee && mint && program
      ? await associatedTokenAccount(payee, mint, program).catch(() => undefined)
      : undefined;
  if (!expected || destination !== expected)
    out.push(`pays into ${destination ?? "nothing"}, not the token account of ${payee ?? "a payee"}`);
  return out;
}
