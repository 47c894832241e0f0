/**
 * The devnet's Solana chain: LiteSVM (the Solana runtime, no history of its own) with a clock we
 * move (`slot-clock.ts`: slots follow the wall clock, so the chain's clock does not fall behind
 * when this process is busy), the blockhashes it issued, and a bounded history of what landed
 * (`history.ts`); a blockhash is valid for 150 slots after
 * the one that issued it, as on Solana, and a transaction whose blockhash is not valid never lands.
 */
import { getAddressEncoder } from "@solana/kit";
import {
  type DecodedTransaction,
  decodeTransaction,
  memoListing,
  toBase58,
  transactionError,
} from "./encoding.js";
import { type HistoryLimits, type LandedTransaction, TransactionHistory } from "./history.js";
import type {
  LiteSvmBinding,
  NativeAccount,
  NativeFailedTransaction,
  NativeLiteSvm,
  NativeTransactionMetadata,
} from "./litesvm.js";
import { SlotClock } from "./slot-clock.js";

/** Slots a blockhash stays valid after the one that issued it (Solana's MAX_PROCESSING_AGE). */
export const BLOCKHASH_VALID_SLOTS = 150;
const LAMPORTS_PER_SIGNATURE = 5000;
const addressBytes = (address: string) => new Uint8Array(getAddressEncoder().encode(address as never));

export interface LocalChainOptions {
  slotTimeMs: number;
  history: Omit<HistoryLimits, "minAgeSlots">;
  /** The wall clock (tests move it). */
  now?: () => number;
}

/** A JSON-RPC error as the node answers it. */
export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

export interface Simulation {
  err: unknown;
  logs: string[];
  unitsConsumed: number;
  innerInstructions: Array<{ index: number; instructions: unknown[] }>;
}

export class LocalSolanaChain {
  readonly svm: NativeLiteSvm;
  readonly history: TransactionHistory;
  private readonly clock: SlotClock;
  private readonly blockhashes = new Map<string, number>();
  private slot = 0;
  private transactionCount = 0;

  constructor(
    private readonly binding: LiteSvmBinding,
    options: LocalChainOptions,
  ) {
    this.clock = new SlotClock(options.slotTimeMs, options.now);
    this.svm = new binding.LiteSvm();
    // Its own history is unbounded by time and duplicates ours: off. Blockhashes are ours to judge.
    this.svm.setTransactionHistory(0n);
    this.svm.setBlockhashCheck(false);
    this.history = new TransactionHistory({ ...options.history, minAgeSlots: BLOCKHASH_VALID_SLOTS + 1 });
    this.issueBlockhash();
    this.syncClock();
  }

  /** Moves the chain to the slot the wall clock says: a new blockhash, the clock sysvar, pruning. */
  advance(): number {
    const target = this.clock.slotNow();
    if (target <= this.slot) return this.slot;
    this.slot = target;
    this.svm.warpToSlot(BigInt(target));
    this.issueBlockhash();
    this.syncClock();
    this.history.prune(target);
    return this.slot;
  }

  get currentSlot(): number {
    return this.advance();
  }

  get transactions(): number {
    return this.transactionCount;
  }

  /** Unix seconds of a slot, as its block carries it. */
  blockTime(slot: number): number {
    return this.clock.blockTime(slot);
  }

  /** Chain time jumps to `unixMs` from the next slot on (never backwards). */
  timeTravel(unixMs: number): void {
    this.clock.timeTravel(unixMs, this.advance());
  }

  /**
   * The chain jumps to `slot` at once (never backwards), as if that many slots had passed: their
   * time passes too, and blockhashes issued before expire as they would have.
   */
  travelToSlot(slot: number): void {
    this.clock.travelToSlot(slot, this.advance());
    this.advance();
  }

  latestBlockhash(): { blockhash: string; slot: number; lastValidBlockHeight: number } {
    const slot = this.advance();
    const blockhash = this.svm.latestBlockhash();
    const issued = this.blockhashes.get(blockhash) ?? slot;
    return { blockhash, slot, lastValidBlockHeight: issued + BLOCKHASH_VALID_SLOTS };
  }

  isBlockhashValid(blockhash: string): boolean {
    const issued = this.blockhashes.get(blockhash);
    return issued !== undefined && this.advance() - issued <= BLOCKHASH_VALID_SLOTS;
  }

  account(address: string): NativeAccount | null {
    return this.svm.getAccount(addressBytes(address));
  }

  setAccount(address: string, lamports: bigint, data: Uint8Array, owner: string): void {
    this.svm.setAccount(
      addressBytes(address),
      new this.binding.Account(lamports, data, addressBytes(owner), false, 0n),
    );
  }

  simulate(wire: Uint8Array, options: { sigVerify: boolean; replaceRecentBlockhash: boolean }): Simulation {
    const decoded = decodeTransaction(wire);
    this.advance();
    if (!options.replaceRecentBlockhash && !this.isBlockhashValid(decoded.blockhash)) {
      return { err: "BlockhashNotFound", logs: [], unitsConsumed: 0, innerInstructions: [] };
    }
    const sigverify = this.svm.getSigverify();
    this.svm.setSigverify(options.sigVerify);
    try {
      const result = decoded.versioned
        ? this.svm.simulateVersionedTransaction(wire)
        : this.svm.simulateLegacyTransaction(wire);
      const failed = this.isFailure(result);
      const meta = failed ? result.meta() : (result as { meta(): NativeTransactionMetadata }).meta();
      return {
        err: failed ? transactionError(result.err()) : null,
        logs: meta.logs(),
        unitsConsumed: Number(meta.computeUnitsConsumed()),
        innerInstructions: innerInstructions(meta),
      };
    } finally {
      this.svm.setSigverify(sigverify);
    }
  }

  /**
   * Lands a transaction in the current slot (or refuses it, as a leader would drop it: bad
   * signatures, unknown or expired blockhash, a duplicate). Returns its signature.
   */
  send(wire: Uint8Array, options: { skipPreflight: boolean }): string {
    const decoded = decodeTransaction(wire);
    const first = decoded.signatures[0];
    if (!first) throw new RpcError(-32003, "Transaction signature verification failure");
    const signature = toBase58(first);
    const slot = this.advance();
    if (this.history.get(signature))
      throw new RpcError(
        -32002,
        "Transaction simulation failed: This transaction has already been processed",
        { err: "AlreadyProcessed", logs: [] },
      );
    if (!this.isBlockhashValid(decoded.blockhash)) {
      throw new RpcError(-32002, "Transaction simulation failed: Blockhash not found", {
        err: "BlockhashNotFound",
        logs: [],
        accounts: null,
        unitsConsumed: 0,
        returnData: null,
      });
    }
    if (!options.skipPreflight) {
      const sim = this.simulate(wire, { sigVerify: true, replaceRecentBlockhash: false });
      if (sim.err !== null) {
        throw new RpcError(-32002, `Transaction simulation failed: ${JSON.stringify(sim.err)}`, {
          err: sim.err,
          logs: sim.logs,
          accounts: null,
          unitsConsumed: sim.unitsConsumed,
          returnData: null,
        });
      }
    }
    const keys = decoded.accounts.map(addressBytes);
    const preBalances = keys.map((k) => Number(this.svm.getBalance(k) ?? 0n));
    const result = decoded.versioned
      ? this.svm.sendVersionedTransaction(wire)
      : this.svm.sendLegacyTransaction(wire);
    const failed = this.isFailure(result);
    const err = failed ? transactionError(result.err()) : null;
    if (err === "SignatureFailure" || err === "SanitizeFailure" || err === "MissingSignatureForFee") {
      throw new RpcError(-32003, `Transaction signature verification failure (${String(err)})`);
    }
    const meta = failed ? result.meta() : (result as NativeTransactionMetadata);
    this.record(decoded, wire, signature, slot, err, meta, preBalances, keys);
    return signature;
  }

  private record(
    decoded: DecodedTransaction,
    wire: Uint8Array,
    signature: string,
    slot: number,
    err: unknown,
    meta: NativeTransactionMetadata,
    preBalances: number[],
    keys: Uint8Array[],
  ): void {
    const landed: LandedTransaction = {
      signature,
      slot,
      blockTime: this.blockTime(slot),
      wire: Uint8Array.from(wire),
      err,
      fee: fee(decoded),
      logs: meta.logs(),
      accounts: decoded.accounts,
      preBalances,
      postBalances: keys.map((k) => Number(this.svm.getBalance(k) ?? 0n)),
      computeUnits: Number(meta.computeUnitsConsumed()),
      memo: memoListing(decoded),
    };
    this.history.add(landed);
    this.transactionCount++;
  }

  private isFailure(result: unknown): result is NativeFailedTransaction {
    return result instanceof this.binding.FailedTransactionMetadata;
  }

  private issueBlockhash(): void {
    this.svm.expireBlockhash();
    this.blockhashes.set(this.svm.latestBlockhash(), this.slot);
    for (const [hash, issued] of this.blockhashes) {
      if (this.slot - issued <= 2 * BLOCKHASH_VALID_SLOTS) break;
      this.blockhashes.delete(hash);
    }
  }

  private syncClock(): void {
    const clock = this.svm.getClock();
    clock.slot = BigInt(this.slot);
    clock.unixTimestamp = BigInt(this.blockTime(this.slot));
    this.svm.setClock(clock);
  }
}

/** Base fee per signature plus the priority fee its compute budget instructions ask for. */
function fee(decoded: DecodedTransaction): number {
  let limit = 200_000;
  let microLamports = 0n;
  for (const ix of decoded.message.instructions ?? []) {
    if (decoded.accounts[ix.programAddressIndex] !== "ComputeBudget111111111111111111111111111111") continue;
    const data = ix.data ?? new Uint8Array();
    const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
    if (data[0] === 2 && data.length >= 5) limit = view.getUint32(1, true);
    if (data[0] === 3 && data.length >= 9) microLamports = view.getBigUint64(1, true);
  }
  const priority = (microLamports * BigInt(limit) + 999_999n) / 1_000_000n;
  return decoded.requiredSignatures * LAMPORTS_PER_SIGNATURE + Number(priority);
}

function innerInstructions(meta: NativeTransactionMetadata): Simulation["innerInstructions"] {
  return meta
    .innerInstructions()
    .map((group, index) => ({
      index,
      instructions: group.map((inner) => {
        const ix = inner.instruction();
        return {
          programIdIndex: ix.programIdIndex(),
          accounts: [...ix.accounts()],
          data: toBase58(ix.data()),
          stackHeight: inner.stackHeight(),
        };
      }),
    }))
    .filter((group) => group.instructions.length > 0);
}
