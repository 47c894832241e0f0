/**
 * The local Solana node's transaction history, bounded: what landed in the last `maxAgeSlots`
 * slots, at most `maxEntries` transactions, never less than the slots where a blockhash is still
 * valid (so a resent transaction is always recognized). Older entries are dropped whole slot by
 * whole slot, and `firstAvailableSlot` moves past them: every transaction that landed at or after
 * that slot is still here, which is what a reader of the history (the service's reconciler) relies
 * on to tell "not found" from "no longer kept" (docs/devnet.md, "How long it lasts").
 */

/** One landed transaction, as compact as the RPC answers about it allow. */
export interface LandedTransaction {
  signature: string;
  slot: number;
  /** Unix seconds of its slot. */
  blockTime: number;
  /** The transaction as sent (wire bytes). */
  wire: Uint8Array;
  /** The transaction error in the RPC's JSON form, or null when it succeeded. */
  err: unknown;
  fee: number;
  logs: string[];
  /** Account keys of the message, fee payer first. */
  accounts: string[];
  preBalances: number[];
  postBalances: number[];
  computeUnits: number;
  /** The RPC's memo listing: "[length] text" per memo instruction, joined by "; ". */
  memo: string | null;
}

interface Stored extends LandedTransaction {
  seq: number;
}

export interface HistoryLimits {
  /** Slots of history kept (older ones are dropped). */
  maxAgeSlots: number;
  /** Transactions kept at most (the oldest slots go first). */
  maxEntries: number;
  /** Slots that are never dropped whatever the count (a blockhash's lifetime). */
  minAgeSlots: number;
}

export class TransactionHistory {
  private readonly bySignature = new Map<string, Stored>();
  private readonly byAddress = new Map<string, Queue>();
  /** Every entry, oldest first; `head` is the first one still kept. */
  private entries: Stored[] = [];
  private head = 0;
  private seq = 0;
  private first: number;

  constructor(
    private readonly limits: HistoryLimits,
    firstSlot = 0,
  ) {
    this.first = firstSlot;
  }

  get size(): number {
    return this.entries.length - this.head;
  }

  /** Every transaction that landed at or after this slot is kept. */
  get firstAvailableSlot(): number {
    return this.first;
  }

  add(tx: LandedTransaction): void {
    if (this.bySignature.has(tx.signature)) throw new Error(`transaction ${tx.signature} already landed`);
    // Addresses repeat from one transaction to the next: each entry shares its address strings
    // with the index's keys instead of holding copies of its own.
    const accounts = tx.accounts.map((a) => this.byAddress.get(a)?.key ?? a);
    const stored: Stored = { ...tx, accounts, seq: this.seq++ };
    this.entries.push(stored);
    this.bySignature.set(tx.signature, stored);
    for (const account of new Set(accounts)) {
      const list = this.byAddress.get(account);
      if (list) list.items.push(stored);
      else this.byAddress.set(account, { key: account, items: [stored], head: 0 });
    }
  }

  get(signature: string): LandedTransaction | undefined {
    return this.bySignature.get(signature);
  }

  /**
   * An address's transactions, newest first, strictly older than `before` (a signature) and
   * strictly newer than `until`, at most `limit`. An unknown `before` lists nothing (a cursor into
   * history no longer kept).
   */
  forAddress(
    address: string,
    options: { limit: number; before?: string; until?: string },
  ): LandedTransaction[] {
    const list = this.byAddress.get(address) ?? { key: address, items: [], head: 0 };
    let end = list.items.length;
    if (options.before !== undefined) {
      const cursor = this.bySignature.get(options.before);
      if (!cursor) return [];
      end = lowerBound(list, cursor.seq);
    }
    const stopSeq = options.until !== undefined ? this.bySignature.get(options.until)?.seq : undefined;
    const out: LandedTransaction[] = [];
    for (let i = end - 1; i >= list.head && out.length < options.limit; i--) {
      const entry = list.items[i] as Stored;
      if (stopSeq !== undefined && entry.seq <= stopSeq) break;
      out.push(entry);
    }
    return out;
  }

  /** Drops what the limits no longer keep, as of `currentSlot`. */
  prune(currentSlot: number): void {
    const { maxAgeSlots, maxEntries, minAgeSlots } = this.limits;
    const protectedFrom = currentSlot - minAgeSlots;
    const ageFloor = Math.min(currentSlot - maxAgeSlots, protectedFrom);
    if (ageFloor > this.first) this.first = ageFloor;
    let dropUntilSlot = this.first - 1;
    if (this.size > maxEntries) {
      const over = this.entries[this.head + (this.size - maxEntries) - 1] as Stored;
      // Whole slots only, and never one where a blockhash may still be valid.
      dropUntilSlot = Math.max(dropUntilSlot, Math.min(over.slot, protectedFrom - 1));
    }
    while (this.head < this.entries.length) {
      const oldest = this.entries[this.head] as Stored;
      if (oldest.slot > dropUntilSlot) break;
      this.drop(oldest);
      this.head++;
      if (oldest.slot + 1 > this.first) this.first = oldest.slot + 1;
    }
    if (this.head > 1024 && this.head * 2 > this.entries.length) {
      this.entries = this.entries.slice(this.head);
      this.head = 0;
    }
  }

  private drop(entry: Stored): void {
    this.bySignature.delete(entry.signature);
    for (const account of new Set(entry.accounts)) {
      const list = this.byAddress.get(account);
      if (!list) continue;
      // The oldest entry overall is the oldest of each of its addresses.
      if (list.items[list.head] === entry) list.head++;
      if (list.head === list.items.length) this.byAddress.delete(account);
      else if (list.head > 1024 && list.head * 2 > list.items.length) {
        list.items = list.items.slice(list.head);
        list.head = 0;
      }
    }
  }
}

/** An address's entries, oldest first, from `head` on. */
interface Queue {
  key: string;
  items: Stored[];
  head: number;
}

/** First index whose entry's seq is >= `seq` (the queue is ordered by seq). */
function lowerBound(list: Queue, seq: number): number {
  let lo = list.head;
  let hi = list.items.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((list.items[mid] as Stored).seq < seq) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
