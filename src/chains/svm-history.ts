import { address, type createSolanaRpc, type Signature } from "@solana/kit";

/**
 * A Solana payer's history as the RPC lists it, newest first, read back to a floor (svm-landed.ts
 * searches it for an unclear payment's transaction).
 */

export type SolanaRpc = ReturnType<typeof createSolanaRpc>;

/** Signatures per page of the payer's history (the RPC's maximum is 1,000). */
export const PAGE_SIZE = 1000;
/** Pages one resolution may read; a longer history leaves the payment pending until a later pass. */
const MAX_PAGES = 20;
const RPC_TIMEOUT_MS = 5000;

/** Every RPC call of a resolution is bounded in time. */
export const rpcTimeout = () => ({ abortSignal: AbortSignal.timeout(RPC_TIMEOUT_MS) });

/** One entry of a payer's history as the RPC lists it. */
export interface Listed {
  signature: Signature;
  memo: string | null;
  blockTime: number | null;
  failed: boolean;
}

/** A payer's history, newest first, read back to a floor (chain time) or its end. */
export interface Listing {
  entries: Listed[];
  /**
   * The listing reached the start of the node's history; with the time of its first block, and
   * whether that is the chain's first (slot 0: the node dropped nothing).
   */
  end?: { firstBlockTime: number | null; fromGenesis: boolean };
}

/** The payer's history, newest first, page by page (`before` cursor), back to `floor`. */
async function readHistory(
  rpc: SolanaRpc,
  pageSize: number,
  wallet: string,
  floor: number,
): Promise<Listing> {
  const entries: Listed[] = [];
  let before: Signature | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const list = await rpc
      .getSignaturesForAddress(address(wallet), {
        limit: pageSize,
        commitment: "confirmed",
        ...(before ? { before } : {}),
      })
      .send(rpcTimeout());
    for (const entry of list) {
      const blockTime = entry.blockTime === null ? null : Number(entry.blockTime);
      entries.push({ signature: entry.signature, memo: entry.memo, blockTime, failed: entry.err !== null });
      if (blockTime !== null && blockTime < floor) return { entries };
    }
    const last = list.at(-1);
    if (list.length < pageSize || !last) {
      const first = await rpc.getFirstAvailableBlock().send(rpcTimeout());
      const time = await rpc.getBlockTime(first).send(rpcTimeout());
      return {
        entries,
        end: { firstBlockTime: time === null ? null : Number(time), fromGenesis: Number(first) === 0 },
      };
    }
    before = last.signature;
  }
  return { entries };
}

/**
 * Reads payers' histories, at most one read in flight per wallet. A caller joins the next read
 * that has not started yet (the floor is the lowest of its callers'), so a read always starts
 * after every caller asked for it: what landed before any caller's question is in it. Many
 * unclear payments of one wallet at once cost one read, not one each (a real node's history
 * reads are among its most expensive calls; the devnet once ran a node on which each page was a
 * scan of its whole history: bench/results/devnet-history.md).
 */
export function payerHistory(rpc: SolanaRpc, pageSize: number) {
  const read = (wallet: string, floor: number) => readHistory(rpc, pageSize, wallet, floor);
  const queued = new Map<string, { floor: number; listing: Promise<Listing> }>();
  const tail = new Map<string, Promise<unknown>>();
  return (wallet: string, floor: number): Promise<Listing> => {
    const waiting = queued.get(wallet);
    if (waiting) {
      waiting.floor = Math.min(waiting.floor, floor);
      return waiting.listing;
    }
    const previous = tail.get(wallet) ?? Promise.resolve();
    const next = { floor, listing: undefined as unknown as Promise<Listing> };
    next.listing = previous
      .catch(() => undefined)
      .then(() => {
        // Started: later callers wait for the next read.
        queued.delete(wallet);
        return read(wallet, next.floor);
      });
    queued.set(wallet, next);
    tail.set(wallet, next.listing);
    const forget = () => {
      if (tail.get(wallet) === next.listing) tail.delete(wallet);
    };
    next.listing.then(forget, forget);
    return next.listing;
  };
}
