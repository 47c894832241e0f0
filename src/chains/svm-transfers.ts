import {
  type Address,
  address,
  appendTransactionMessageInstructions,
  type Base64EncodedWireTransaction,
  compileTransaction,
  createKeyPairSignerFromPrivateKeyBytes,
  createNoopSigner,
  createTransactionMessage,
  getBase64EncodedWireTransaction,
  getSignatureFromTransaction,
  getTransactionDecoder,
  type Instruction,
  isSolanaError,
  pipe,
  type Signature,
  SOLANA_ERROR__JSON_RPC__SERVER_ERROR_SEND_TRANSACTION_PREFLIGHT_FAILURE,
  SOLANA_ERROR__JSON_RPC__SERVER_ERROR_TRANSACTION_SIGNATURE_VERIFICATION_FAILURE,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  type TransactionSigner,
} from "@solana/kit";
import { getTransferSolInstruction } from "@solana-program/system";
import {
  findAssociatedTokenPda,
  getCloseAccountInstruction,
  getCreateAssociatedTokenIdempotentInstruction,
  getTransferCheckedInstruction,
} from "@solana-program/token";
import { rpcTimeout, type SolanaRpc } from "./svm-history.js";
import type { OwnTransfers, Sent } from "./types.js";

/**
 * A tab's funding and return on Solana (docs/payments.md#tabs), as transactions the service builds
 * and sends itself: a session key's token account must exist before anyone can pay into it, and the
 * x402 `exact` scheme cannot open one.
 *
 * - Funding, signed by the wallet as its own fee payer: open the session's token account, move the
 *   tab's amount into it, and give the session key the lamports a system account must hold, from
 *   which it later pays its return's fee.
 * - Return, signed by the session key as fee payer: every token back to the wallet, the token
 *   account closed (its rent back to the wallet), and the session's lamports less the fee back too.
 *
 * The wallet's net cost in SOL is the two transactions' base fees. Each carries a memo naming the
 * tab, so the resolver (svm-landed.ts) finds it in the payer's history when its answer was lost.
 */

const MEMO_PROGRAM = address("MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr");
/** Solana's base fee per signature, the only fee these transactions pay (no priority fee). */
const LAMPORTS_PER_SIGNATURE = 5000n;
/** How long `send` waits for the chain's word: about a blockhash's life. */
const CONFIRM_MS = 60_000;
const POLL_MS = 250;

function memoInstruction(text: string): Instruction {
  return { programAddress: MEMO_PROGRAM, data: new TextEncoder().encode(text) };
}

/** A mint's token program (its owner) and decimals, read from the chain. */
async function mintOf(rpc: SolanaRpc, mint: Address): Promise<{ program: Address; decimals: number }> {
  const info = await rpc.getAccountInfo(mint, { encoding: "base64" }).send(rpcTimeout());
  if (!info.value) throw new Error(`no mint ${mint} on this network`);
  const data = Buffer.from(info.value.data[0], "base64");
  const decimals = data[44];
  if (decimals === undefined) throw new Error(`${mint} is not a mint`);
  return { program: info.value.owner, decimals };
}

/** An RPC error value as text (its numbers may be bigints). */
function plain(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => (typeof v === "bigint" ? v.toString() : v));
}

async function ataOf(owner: Address, mint: Address, program: Address): Promise<Address> {
  const [ata] = await findAssociatedTokenPda({ owner, mint, tokenProgram: program });
  return ata;
}

async function compiled(
  rpc: SolanaRpc,
  feePayer: TransactionSigner,
  instructions: Instruction[],
  sign: boolean,
): Promise<string> {
  const { value: blockhash } = await rpc.getLatestBlockhash({ commitment: "confirmed" }).send(rpcTimeout());
  const message = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayerSigner(feePayer, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash(blockhash, m),
    (m) => appendTransactionMessageInstructions(instructions, m),
  );
  const transaction = sign ? await signTransactionMessageWithSigners(message) : compileTransaction(message);
  return getBase64EncodedWireTransaction(transaction);
}

export function svmOwnTransfers(rpc: SolanaRpc): OwnTransfers {
  return {
    funding: (from, to, asset, amount, memo) => funding(rpc, from, to, asset, amount, memo),
    returnAll: (seed, to, asset, memo) => returnAll(rpc, seed, to, asset, memo),
    send: (transaction) => send(rpc, transaction),
  };
}

async function funding(
  rpc: SolanaRpc,
  from: string,
  to: string,
  asset: string,
  amount: bigint,
  memo: string,
): Promise<string> {
  const mint = address(asset);
  const wallet = createNoopSigner(address(from));
  const session = address(to);
  const { program, decimals } = await mintOf(rpc, mint);
  const [source, destination] = await Promise.all([
    ataOf(wallet.address, mint, program),
    ataOf(session, mint, program),
  ]);
  // A system account must hold the rent-exempt minimum of no data, and still hold it once the fee
  // of its return is taken (the fee is charged before any instruction runs).
  const rent = await rpc.getMinimumBalanceForRentExemption(0n).send(rpcTimeout());
  const lamports = rent + LAMPORTS_PER_SIGNATURE;
  return compiled(
    rpc,
    wallet,
    [
      getCreateAssociatedTokenIdempotentInstruction({
        payer: wallet,
        ata: destination,
        owner: session,
        mint,
        tokenProgram: program,
      }),
      getTransferCheckedInstruction(
        { source, mint, destination, authority: wallet, amount, decimals },
        { programAddress: program },
      ),
      getTransferSolInstruction({ source: wallet, destination: session, amount: lamports }),
      memoInstruction(memo),
    ],
    false,
  );
}

async function returnAll(
  rpc: SolanaRpc,
  seed: Uint8Array,
  to: string,
  asset: string,
  memo: string,
): Promise<{ transaction: string; amount: bigint } | undefined> {
  const key = await createKeyPairSignerFromPrivateKeyBytes(seed);
  const mint = address(asset);
  const wallet = address(to);
  const { program, decimals } = await mintOf(rpc, mint);
  const account = await ataOf(key.address, mint, program);
  const [tokens, own] = await Promise.all([
    rpc.getAccountInfo(account, { encoding: "base64" }).send(rpcTimeout()),
    rpc.getBalance(key.address, { commitment: "confirmed" }).send(rpcTimeout()),
  ]);
  const lamports = BigInt(own.value);
  if (!tokens.value && lamports === 0n) return undefined;
  if (lamports < LAMPORTS_PER_SIGNATURE) {
    throw new Error(`the session key ${key.address} holds too little SOL to pay its return's fee`);
  }
  const instructions: Instruction[] = [];
  let amount = 0n;
  if (tokens.value) {
    amount = Buffer.from(tokens.value.data[0], "base64").readBigUInt64LE(64);
    if (amount > 0n) {
      const destination = await ataOf(wallet, mint, program);
      instructions.push(
        getTransferCheckedInstruction(
          { source: account, mint, destination, authority: key, amount, decimals },
          { programAddress: program },
        ),
      );
    }
    instructions.push(
      getCloseAccountInstruction({ account, destination: wallet, owner: key }, { programAddress: program }),
    );
  }
  const rest = lamports - LAMPORTS_PER_SIGNATURE;
  if (rest > 0n)
    instructions.push(getTransferSolInstruction({ source: key, destination: wallet, amount: rest }));
  instructions.push(memoInstruction(memo));
  return { transaction: await compiled(rpc, key, instructions, true), amount };
}

async function send(rpc: SolanaRpc, transaction: string): Promise<Sent> {
  let signature: Signature;
  try {
    signature = await rpc
      .sendTransaction(transaction as Base64EncodedWireTransaction, {
        encoding: "base64",
        preflightCommitment: "confirmed",
      })
      .send(rpcTimeout());
  } catch (error) {
    // The node's refusal (its preflight failed, a signature does not verify): nothing was sent.
    // Anything else (a timeout, a dropped connection) may have been.
    const refused =
      isSolanaError(error, SOLANA_ERROR__JSON_RPC__SERVER_ERROR_SEND_TRANSACTION_PREFLIGHT_FAILURE) ||
      isSolanaError(error, SOLANA_ERROR__JSON_RPC__SERVER_ERROR_TRANSACTION_SIGNATURE_VERIFICATION_FAILURE);
    const message = error instanceof Error ? error.message : String(error);
    if (!refused) return { kind: "unclear", error: message.slice(0, 200) };
    // Refused, or already processed: the same signed transaction may have landed already (the wallet,
    // its fee payer, can send it too). The chain says which.
    const landed = await statusOf(rpc, signatureOf(transaction));
    if (landed === "unreadable") return { kind: "unclear", error: message.slice(0, 200) };
    return landed ?? { kind: "rejected", error: message.slice(0, 200) };
  }
  return confirm(rpc, signature);
}

/** The fee payer's signature: the transaction's id on chain. */
function signatureOf(transaction: string): Signature {
  return getSignatureFromTransaction(getTransactionDecoder().decode(Buffer.from(transaction, "base64")));
}

/** What the chain says of a signature now: landed or failed, unknown to it (undefined), or unreadable. */
async function statusOf(rpc: SolanaRpc, signature: Signature): Promise<Sent | undefined | "unreadable"> {
  const statuses = await rpc
    .getSignatureStatuses([signature], { searchTransactionHistory: true })
    .send(rpcTimeout())
    .catch(() => undefined);
  if (!statuses) return "unreadable";
  const status = statuses.value[0];
  if (!status || status.confirmationStatus === "processed") return undefined;
  return status.err
    ? { kind: "rejected", error: `failed on chain: ${plain(status.err)}`.slice(0, 200) }
    : { kind: "landed", transaction: signature };
}

/** Wait for the chain's word on a sent transaction, about a blockhash's life. */
async function confirm(rpc: SolanaRpc, signature: Signature): Promise<Sent> {
  const until = Date.now() + CONFIRM_MS;
  while (Date.now() < until) {
    const found = await statusOf(rpc, signature);
    if (found && found !== "unreadable") return found;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
  return { kind: "unclear", error: "no confirmation in time" };
}
