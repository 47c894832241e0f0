import { createHash } from "node:crypto";
import {
  type Blockhash,
  createSolanaRpc,
  getCompiledTransactionMessageDecoder,
  getTransactionDecoder,
  isSignature,
  type Signature,
} from "@solana/kit";
import { PAGE_SIZE, payerHistory, rpcTimeout, type SolanaRpc } from "./svm-history.js";
import type { PaymentOnChain, Resolution } from "./types.js";

/**
 * How an unclear Solana payment is judged from the chain (docs/payments.md, "Reconciliation"):
 * settled when a transaction with its message landed, failed only when the chain proves it can no
 * longer land and an exhaustive search of the payer's history since it was signed found nothing.
 * Anything less certain (an RPC error, a search cut short) leaves it pending.
 */

/** What the reconciler keeps of a signed Solana payment (no signature, no key). */
export interface SvmAuthorization {
  kind: "svm-exact";
  /** Unix seconds: signing time plus the longer of the offer's window and a blockhash's lifetime. */
  expiresAt: string;
  /** SHA-256 of the message bytes: the landed transaction (co-signed by the fee payer) has the same. */
  messageHash?: string;
  /** The message's recent blockhash: the transaction can land only while the chain holds it valid. */
  blockhash?: string;
  /** Unix seconds when it was signed: it cannot have landed before. Older rows use the row's creation. */
  signedAt?: string;
  /**
   * The text of the message's memo instruction (the x402 client adds a random nonce, or the
   * seller's memo): the RPC lists each signature with its memo, so only the entries that carry it
   * need their transaction fetched. Not a secret.
   */
  memo?: string;
  /**
   * Whose signature moves the tokens: the message's signer after the fee payer (the user's wallet,
   * or a tab's session key). Unclear payments are searched in its history. Older rows have none:
   * the row's wallet is searched, as before.
   */
  signer?: string;
}

/** The SPL Memo program, whose instruction the x402 exact scheme appends to every payment. */
const MEMO_PROGRAM = "MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr";

/** Upper bound of a blockhash's lifetime (about 150 blocks, 60-90 s), with margin. */
export const BLOCKHASH_SECONDS = 180;
/**
 * How far before the signing time (our clock) the search goes on (chain time), besides how far
 * the chain's clock is behind ours when asked: a block's time is the validators' estimate.
 */
const CLOCK_SKEW_SECONDS = 120;

export function svmAuthorization(payment: PaymentOnChain): SvmAuthorization | undefined {
  const a = payment.authorization as Partial<SvmAuthorization> | null;
  return a?.kind === "svm-exact" && a.expiresAt ? (a as SvmAuthorization) : undefined;
}

/**
 * SHA-256 of a transaction's message bytes. The facilitator co-signs the same message as fee payer,
 * so the landed transaction has the same hash: the reconciler finds it without keeping a signature.
 */
export function solanaMessageHash(wireTransaction: Uint8Array): string {
  return messageHashOf(getTransactionDecoder().decode(wireTransaction).messageBytes);
}

const messageHashOf = (messageBytes: Uint8Array | ArrayLike<number>): string =>
  createHash("sha256").update(new Uint8Array(messageBytes)).digest("hex");

/**
 * The signer after the fee payer of a wire transaction (the facilitator pays the fee and signs
 * first; the payer's authority second), or the only signer when it pays its own fee.
 */
export function solanaSigner(wireTransaction: Uint8Array): string | undefined {
  const signers = Object.keys(getTransactionDecoder().decode(wireTransaction).signatures);
  return signers[1] ?? signers[0];
}

/** The recent blockhash a wire transaction's message carries (its lifetime). */
export function solanaBlockhash(wireTransaction: Uint8Array): string {
  const decoded = getTransactionDecoder().decode(wireTransaction);
  return getCompiledTransactionMessageDecoder().decode(decoded.messageBytes).lifetimeToken;
}

/** The memo instruction's text of a wire transaction, if it has exactly one. */
export function solanaMemo(wireTransaction: Uint8Array): string | undefined {
  const decoded = getTransactionDecoder().decode(wireTransaction);
  const message = getCompiledTransactionMessageDecoder().decode(decoded.messageBytes);
  const memos = (message.instructions ?? []).filter(
    (ix) => message.staticAccounts[ix.programAddressIndex] === MEMO_PROGRAM,
  );
  const data = memos.length === 1 ? memos[0]?.data : undefined;
  if (!data || data.length === 0) return undefined;
  const text = new TextDecoder("utf-8", { fatal: false }).decode(data);
  return text.length > 0 ? text : undefined;
}

/**
 * Whether an RPC memo listing is in the "[length] text" form and does not hold `memo` anywhere.
 * Not split on the listing's "; ": a seller's memo may hold one itself ("order 7; thanks").
 */
function listsOtherMemo(listed: string | null | undefined, memo: string): boolean {
  if (typeof listed !== "string" || !/^\[\d+\] /.test(listed)) return false;
  return !listed.includes(memo);
}

export interface LandedOptions {
  /** Signatures per page of history (tests use a small one to page). Default 1,000. */
  pageSize?: number;
}

type Search = { found: { signature: string; failed: boolean } } | { complete: boolean };

/** Chain time (the latest finalized block's), or undefined when the node cannot say. */
async function chainTime(rpc: SolanaRpc): Promise<number | undefined> {
  const slot = await rpc.getSlot({ commitment: "finalized" }).send(rpcTimeout());
  const time = await rpc.getBlockTime(slot).send(rpcTimeout());
  return time === null ? undefined : Number(time);
}

/**
 * Whether the chain proves the transaction can never land from now on. With its blockhash: the
 * finalized chain is past the signing time by more than a blockhash lives (so the node has seen
 * that blockhash) and holds it invalid (so no later block accepts it; any block that did is
 * finalized, hence in the history read after this). Older rows without it: the finalized
 * chain's time is past their `expiresAt`.
 */
async function cannotLand(
  rpc: SolanaRpc,
  auth: SvmAuthorization,
  signedAt: number,
  chainNow: number | undefined,
): Promise<boolean> {
  if (chainNow === undefined) return false;
  if (!auth.blockhash) return chainNow > Number(auth.expiresAt);
  if (chainNow <= signedAt + BLOCKHASH_SECONDS) return false;
  const valid = await rpc
    .isBlockhashValid(auth.blockhash as Blockhash, { commitment: "finalized" })
    .send(rpcTimeout());
  return !valid.value;
}

/** A transaction as the chain holds it: its message's hash, its signers in order, whether it failed. */
async function landedTransaction(
  rpc: SolanaRpc,
  signature: Signature,
): Promise<{ messageHash: string; signers: string[]; failed: boolean } | undefined> {
  const tx = await rpc
    .getTransaction(signature, {
      encoding: "base64",
      maxSupportedTransactionVersion: 0,
      commitment: "confirmed",
    })
    .send(rpcTimeout());
  const wire = tx?.transaction[0];
  if (!tx || wire === undefined) return undefined;
  const decoded = getTransactionDecoder().decode(Buffer.from(wire, "base64"));
  return {
    messageHash: messageHashOf(decoded.messageBytes),
    signers: Object.keys(decoded.signatures),
    failed: tx.meta?.err != null,
  };
}

/** Unix seconds when the payment was signed (older rows: when their row was made), or NaN. */
function signedAtOf(auth: SvmAuthorization, payment: PaymentOnChain): number {
  if (auth.signedAt) return Number(auth.signedAt);
  return payment.createdAt ? Math.floor(payment.createdAt.getTime() / 1000) : Number.NaN;
}

/** Resolves unclear Solana payments through one RPC endpoint. */
export function solanaResolver(rpcUrl: string, options: LandedOptions = {}) {
  const rpc = createSolanaRpc(rpcUrl);
  const pageSize = Math.min(Math.max(1, options.pageSize ?? PAGE_SIZE), PAGE_SIZE);
  const history = payerHistory(rpc, pageSize);

  /**
   * Looks for the payment's message in the payer's history back to `floor` (chain time). Complete
   * when the history read reached a block older than `floor`, or the history's end while the
   * node holds its chain from the first block, or from one no newer than `floor`; never when a
   * listed transaction could not be read (a lagging or load-balanced node: it may be ours).
   */
  async function search(
    wallet: string,
    hash: string,
    floor: number,
    memo: string | undefined,
  ): Promise<Search> {
    const listing = await history(wallet, floor);
    let unread = false;
    for (const entry of listing.entries) {
      if (entry.blockTime !== null && entry.blockTime < floor) return { complete: !unread };
      // The RPC lists an entry's memos as "[length] text" (joined by "; "): one in that form
      // without ours is another transaction. Any other form is fetched and compared.
      if (memo !== undefined && listsOtherMemo(entry.memo, memo)) continue;
      const landed = await landedTransaction(rpc, entry.signature);
      if (!landed) unread = true;
      else if (landed.messageHash === hash)
        return { found: { signature: entry.signature, failed: entry.failed } };
    }
    const end = listing.end;
    const first = end?.firstBlockTime;
    const whole = end?.fromGenesis === true || (first !== undefined && first !== null && first <= floor);
    return { complete: !unread && whole };
  }

  return {
    /** Whether `signature` landed, succeeded and carries this payment's message (svm.ts, `confirm`). */
    async confirm(payment: PaymentOnChain, signature: string): Promise<{ payer: string } | undefined> {
      const auth = svmAuthorization(payment);
      if (!auth?.messageHash || !isSignature(signature)) return undefined;
      const landed = await landedTransaction(rpc, signature);
      if (!landed || landed.failed || landed.messageHash !== auth.messageHash) return undefined;
      // The payer is the message's signer after the fee payer (a tab's session key, say).
      return { payer: landed.signers[1] ?? payment.wallet };
    },
    /** `now`: this process's clock, the one `signedAt` was read from. */
    async resolve(payment: PaymentOnChain, now = new Date()): Promise<Resolution> {
      const auth = svmAuthorization(payment);
      if (!auth?.messageHash) return { status: "pending" };
      const signedAt = signedAtOf(auth, payment);
      if (!Number.isFinite(signedAt)) return { status: "pending" };
      // Asked before the search, so a transaction landing meanwhile is in the history searched.
      const chainNow = await chainTime(rpc);
      const unlandable = await cannotLand(rpc, auth, signedAt, chainNow);
      // Block times are the chain's clock. Where it runs behind ours (a starved devnet produces
      // slots late), a payment that landed after signing carries a block time earlier than the
      // signing time by up to that lag: the search goes back that much further.
      const behind = chainNow === undefined ? 0 : Math.max(0, Math.floor(now.getTime() / 1000) - chainNow);
      // A tab's payment is the session key's transfer: the user's wallet is not in it.
      const owner = auth.signer ?? payment.wallet;
      const result = await search(owner, auth.messageHash, signedAt - CLOCK_SKEW_SECONDS - behind, auth.memo);
      if ("found" in result) {
        // Landed but the transfer failed: the fee was paid, no token moved, and it cannot land again.
        if (result.found.failed) return { status: "failed", error: "transaction landed and failed" };
        return { status: "settled", txHash: result.found.signature, payer: owner };
      }
      if (result.complete && unlandable) {
        return { status: "failed", error: "blockhash expired without the transaction landing" };
      }
      return { status: "pending" };
    },
  };
}
