/**
 * How many history reads unclear Solana payments cost, against a JSON-RPC node that serves a
 * fixed history (the few methods the resolver calls, in the Solana RPC's shapes) and counts the
 * reads. On the devnet's former node (Surfpool) each `getSignaturesForAddress` scanned its whole
 * history under its state lock, so one read per unclear payment turned a slow devnet into a
 * collapsed one (bench/results/devnet-history.md). The end-to-end verdicts on the real devnet are
 * test/payments/solana-reconcile.test.ts's.
 */
import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import {
  AccountRole,
  address,
  appendTransactionMessageInstruction,
  appendTransactionMessageInstructions,
  type Blockhash,
  compileTransaction,
  createTransactionMessage,
  getBase64EncodedWireTransaction,
  pipe,
  setTransactionMessageFeePayer,
  setTransactionMessageLifetimeUsingBlockhash,
} from "@solana/kit";
import { findAssociatedTokenPda } from "@solana-program/token";
import { afterEach, describe, expect, it } from "vitest";
import { familyOf } from "./index.js";
import { type SvmAuthorization, solanaMessageHash, solanaResolver, solanaSigner } from "./svm-landed.js";
import { isAssociatedTokenAccount, solanaTokenTransfers } from "./svm-signed.js";

const WALLET = "7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU";
const MEMO_PROGRAM = address("MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr");
const BLOCKHASH = "EETubP5AKHgjPAhzPAFcb8BAY1hMH639CWCFTqi3hq1k" as Blockhash;
const NOW = 1_800_000_000;

interface Landed {
  /** Whose history lists it (default WALLET). */
  owner?: string;
  signature: string;
  memo: string;
  wire: string;
  /** Its block's time (chain clock); default ten seconds ago. */
  blockTime?: number;
  /** Listed in the history, but the node cannot return it (lagging, load-balanced). */
  unreadable?: boolean;
}

/**
 * A transaction with the memo instruction the x402 exact scheme appends (unsigned is enough here),
 * WALLET paying the fee; `signer` signs beside it, as a payer's authority does beside a facilitator.
 */
function transaction(memo: string, signer?: string): { wire: string; hash: string } {
  const message = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayer(address(WALLET), m),
    (m) =>
      setTransactionMessageLifetimeUsingBlockhash({ blockhash: BLOCKHASH, lastValidBlockHeight: 1000n }, m),
    (m) =>
      appendTransactionMessageInstruction(
        {
          programAddress: MEMO_PROGRAM,
          ...(signer ? { accounts: [{ address: address(signer), role: AccountRole.READONLY_SIGNER }] } : {}),
          data: new TextEncoder().encode(memo),
        },
        m,
      ),
  );
  const wire = getBase64EncodedWireTransaction(compileTransaction(message));
  return { wire, hash: solanaMessageHash(Buffer.from(wire, "base64")) };
}

/** A base58 string that parses as a 64-byte signature. */
const signature = (i: number) => `${"5".repeat(80)}${String(i).padStart(8, "1").replaceAll("0", "A")}`;

/**
 * The node: `history` newest first; reads of the payer's history are counted and held while
 * `hold` is set, until `release()`.
 */
function fakeNode() {
  const history: Landed[] = [];
  /** The node's oldest available block: its slot (0: it pruned nothing) and time. */
  const first = { slot: 0, blockTime: 0 };
  let reads = 0;
  let held: Array<() => void> = [];
  let hold = false;
  const waitingReads: Array<() => void> = [];
  const answer = (method: string, params: unknown[]): unknown => {
    switch (method) {
      case "getSlot":
        return 500;
      case "getBlockTime":
        return (params[0] as number) === first.slot ? first.blockTime : NOW;
      case "getFirstAvailableBlock":
        return first.slot;
      case "isBlockhashValid":
        return { context: { slot: 500 }, value: false };
      case "getSignaturesForAddress":
        return history
          .filter((tx) => (tx.owner ?? WALLET) === params[0])
          .map((tx) => ({
            signature: tx.signature,
            slot: 400,
            err: null,
            memo: `[${tx.memo.length}] ${tx.memo}`,
            blockTime: tx.blockTime ?? NOW - 10,
            confirmationStatus: "confirmed",
          }));
      case "getTransaction": {
        const tx = history.find((t) => t.signature === params[0]);
        return tx && !tx.unreadable
          ? { slot: 400, blockTime: NOW - 10, meta: { err: null }, transaction: [tx.wire, "base64"] }
          : null;
      }
      default:
        throw new Error(`unexpected ${method}`);
    }
  };
  const server: Server = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => {
      body += chunk;
    });
    req.on("end", async () => {
      const call = JSON.parse(body) as { id: number; method: string; params?: unknown[] };
      if (call.method === "getSignaturesForAddress") {
        reads++;
        for (const notify of waitingReads.splice(0)) notify();
        if (hold) await new Promise<void>((resolve) => held.push(resolve));
      }
      const result = answer(call.method, call.params ?? []);
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify({ jsonrpc: "2.0", id: call.id, result }));
    });
  });
  return {
    server,
    history,
    first,
    reads: () => reads,
    holdReads() {
      hold = true;
    },
    /** Resolves once a read reached the node. */
    nextRead: () => new Promise<void>((resolve) => waitingReads.push(resolve)),
    release() {
      hold = false;
      for (const go of held) go();
      held = [];
    },
  };
}

let running: Server | undefined;
afterEach(async () => {
  running?.close();
  running = undefined;
});

async function start(node: ReturnType<typeof fakeNode>): Promise<string> {
  running = node.server;
  node.server.listen(0, "127.0.0.1");
  await once(node.server, "listening");
  return `http://127.0.0.1:${(node.server.address() as AddressInfo).port}`;
}

/** An unclear payment of WALLET signed `ageSeconds` ago (chain time), with this memo. */
function payment(memo: string, ageSeconds: number) {
  const { hash } = transaction(memo);
  const authorization: SvmAuthorization = {
    kind: "svm-exact",
    expiresAt: String(NOW - ageSeconds + 180),
    messageHash: hash,
    blockhash: BLOCKHASH,
    signedAt: String(NOW - ageSeconds),
    memo,
  };
  return { network: "solana:test", asset: "mint", wallet: WALLET, authorization };
}

describe("whose history an unclear payment is searched in", () => {
  const SESSION = "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM";

  // Found by a black-box run: a tab's payment that landed was called failed, its session key's
  // transfer searched for in the user's wallet's history, where it is not.
  it("a tab's payment: the session key's history, and the session key is the payer", async () => {
    const node = fakeNode();
    node.history.push({ owner: SESSION, signature: signature(5), memo: "tab", ...transaction("tab") });
    const url = await start(node);
    const old = payment("tab", 1000);
    const tabPayment = { ...old, authorization: { ...old.authorization, signer: SESSION } };
    expect(await solanaResolver(url).resolve(tabPayment)).toEqual({
      status: "settled",
      txHash: signature(5),
      payer: SESSION,
    });
  });

  it("the signer is the one after the fee payer, as the signed transaction names it", () => {
    const wire = Buffer.from(transaction("m", SESSION).wire, "base64");
    expect(solanaSigner(wire)).toBe(SESSION);
  });
});

describe("Solana history reads for unclear payments", () => {
  it("resolves 20 unclear payments of one wallet at once with at most two history reads", async () => {
    const node = fakeNode();
    for (let i = 0; i < 5; i++)
      node.history.push({ signature: signature(i), memo: `memo-${i}`, ...transaction(`memo-${i}`) });
    const url = await start(node);
    const resolver = solanaResolver(url);
    node.holdReads();
    const firstRead = node.nextRead();
    // Young payments (their blockhash may still land): settled if found, else pending. They come
    // one by one, as unclear turns do (the RPC client merges only identical calls of one tick).
    const verdicts = [];
    for (let i = 0; i < 20; i++) {
      verdicts.push(resolver.resolve(payment(i === 7 ? "memo-2" : `gone-${i}`, 30)));
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await firstRead;
    await new Promise((resolve) => setTimeout(resolve, 50));
    node.release();
    const results = await Promise.all(verdicts);
    expect(results[7]).toEqual({ status: "settled", txHash: signature(2), payer: WALLET });
    expect(results.filter((r) => r.status === "pending")).toHaveLength(19);
    // One read per payment before: 20 scans of the node's whole history.
    expect(node.reads()).toBeLessThanOrEqual(2);
  });

  it("never judges a payment from a read that started before its question: what landed meanwhile is found", async () => {
    const node = fakeNode();
    const url = await start(node);
    const resolver = solanaResolver(url);
    node.holdReads();
    const firstRead = node.nextRead();
    const early = resolver.resolve(payment("early", 30));
    await firstRead;
    // While that read is under way, a payment lands; its blockhash has since expired on chain.
    node.history.unshift({ signature: signature(9), memo: "late", ...transaction("late") });
    const late = resolver.resolve(payment("late", 1000));
    await new Promise((resolve) => setTimeout(resolve, 100));
    node.release();
    // A stale read would say "not in the history" and "cannot land": failed, and money lost.
    expect(await late).toEqual({ status: "settled", txHash: signature(9), payer: WALLET });
    expect(await early).toEqual({ status: "pending" });
    expect(node.reads()).toBe(2);
  });

  it("fails a payment only when its blockhash is expired and a complete read of the history lacks it", async () => {
    const node = fakeNode();
    node.history.push({ signature: signature(1), memo: "other", ...transaction("other") });
    const url = await start(node);
    const resolver = solanaResolver(url);
    expect(await resolver.resolve(payment("never", 1000))).toEqual({
      status: "failed",
      error: "blockhash expired without the transaction landing",
    });
  });

  it("finds a landed payment whose block time is before its signing time because the chain's clock runs behind", async () => {
    // A starved devnet produces its slots late: its clock is 300 s behind ours. The payment was
    // signed 1,000 s ago by our clock and landed 10 s later, at a block time 290 s before signing.
    const node = fakeNode();
    const ourNow = NOW + 300;
    const signedAt = ourNow - 1000;
    node.history.push({
      signature: signature(3),
      memo: "slow",
      blockTime: signedAt + 10 - 300,
      ...transaction("slow"),
    });
    node.history.push({
      signature: signature(4),
      memo: "older",
      blockTime: signedAt - 900,
      ...transaction("older"),
    });
    const url = await start(node);
    // Its blockhash has expired on chain: judged only by the history read, it would be `failed`.
    expect(
      await solanaResolver(url).resolve(payment("slow", NOW - signedAt), new Date(ourNow * 1000)),
    ).toEqual({
      status: "settled",
      txHash: signature(3),
      payer: WALLET,
    });
  });
});

describe("what a history read cannot decide (a black-box review, h33)", () => {
  it("finds a landed payment whose seller's memo holds the listing's own separator", async () => {
    // The RPC joins memos with "; ": split on it, "order 7; thanks" read as two other memos, and
    // a payment a hostile seller settled, then answered 500, was called failed.
    const node = fakeNode();
    node.history.push({
      signature: signature(5),
      memo: "order 7; thanks",
      ...transaction("order 7; thanks"),
    });
    const url = await start(node);
    expect(await solanaResolver(url).resolve(payment("order 7; thanks", 1000))).toMatchObject({
      status: "settled",
      txHash: signature(5),
    });
  });

  it("leaves a payment pending while a listed transaction cannot be read", async () => {
    const node = fakeNode();
    node.history.push({ signature: signature(6), memo: "ours", unreadable: true, ...transaction("ours") });
    const url = await start(node);
    expect(await solanaResolver(url).resolve(payment("ours", 1000))).toEqual({ status: "pending" });
  });

  it("leaves a payment pending when the node pruned past where the search began", async () => {
    // Searched back 120 s before signing; the node keeps only from 30 s before it.
    const node = fakeNode();
    node.first.slot = 300;
    node.first.blockTime = NOW - 1000 - 30;
    node.history.push({ signature: signature(7), memo: "other", ...transaction("other") });
    const url = await start(node);
    expect(await solanaResolver(url).resolve(payment("gone", 1000))).toEqual({ status: "pending" });
  });
});

// Found by a review (h36): EVM compared what was signed with the quote; Solana did not.
describe("what a signed Solana payment moves", () => {
  const TOKEN = address("TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA");
  const MINT = "4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU";
  const OTHER_MINT = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";
  const PAYEE = "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM";
  const ata = async (owner: string, mint = MINT) =>
    (await findAssociatedTokenPda({ owner: address(owner), mint: address(mint), tokenProgram: TOKEN }))[0];
  const account = (a: string) => ({ address: address(a), role: AccountRole.WRITABLE });
  const token = (data: number[], accounts = [WALLET]) => ({
    programAddress: TOKEN,
    accounts: accounts.map(account),
    data: new Uint8Array(data),
  });
  /** A TransferChecked: from the wallet's account, of `mint`, to `to`, signed by the wallet. */
  const checked = (amount: bigint, to: string, mint = MINT) => {
    const data = new Uint8Array(10);
    data[0] = 12;
    new DataView(data.buffer).setBigUint64(1, amount, true);
    data[9] = 6;
    return token([...data], [WALLET, mint, to, WALLET]);
  };
  const wire = (...instructions: ReturnType<typeof token>[]) => {
    const message = pipe(
      createTransactionMessage({ version: 0 }),
      (m) => setTransactionMessageFeePayer(address(WALLET), m),
      (m) =>
        setTransactionMessageLifetimeUsingBlockhash({ blockhash: BLOCKHASH, lastValidBlockHeight: 1000n }, m),
      (m) => appendTransactionMessageInstructions(instructions, m),
    );
    return getBase64EncodedWireTransaction(compileTransaction(message));
  };
  const svm = familyOf("solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1");
  const authorize = (transaction: string, amount: bigint) =>
    svm?.authorization(
      { x402Version: 2, payload: { transaction } } as never,
      { amount, payTo: PAYEE, asset: MINT, maxTimeoutSeconds: 60 },
      NOW,
    );

  it("is one transfer of the amount and token quoted, or it is refused before it is sent", async () => {
    const to = await ata(PAYEE);
    expect(solanaTokenTransfers(Buffer.from(wire(checked(10_000n, to), token([9])), "base64"))).toEqual([
      { amount: 10_000n, mint: MINT, destination: to, program: TOKEN },
    ]);
    expect(authorize(wire(checked(10_000n, to)), 10_000n)).toMatchObject({ kind: "svm-exact" });
    for (const tx of [
      wire(checked(20_000n, to)),
      wire(checked(10_000n, to), checked(1n, to)),
      wire(checked(10_000n, to), token([4, 1, 0, 0, 0, 0, 0, 0, 0])),
      wire(checked(10_000n, await ata(PAYEE, OTHER_MINT), OTHER_MINT)),
      wire(),
    ])
      expect(() => authorize(tx, 10_000n)).toThrow(/differs from the quote/);
  });

  it("pays the payee's associated token account, and no other account", async () => {
    expect(isAssociatedTokenAccount(await ata(PAYEE), PAYEE, TOKEN, MINT)).toBe(true);
    for (const to of [await ata(WALLET), PAYEE, await ata(PAYEE, OTHER_MINT)])
      expect(() => authorize(wire(checked(10_000n, to)), 10_000n)).toThrow(
        /recipient differs from the quote/,
      );
    expect(isAssociatedTokenAccount(await ata(PAYEE), "not an address", TOKEN, MINT)).toBe(false);
  });
});
