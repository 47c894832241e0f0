import {
  IDEMPOTENCY_TTL_MS,
  type IdempotencyClaim,
  type IdempotencyState,
  type IdempotencyStore,
  PURGE_BATCH,
  PURGE_EVERY,
} from "../../idempotency/index.js";
import { storable } from "../storable.js";
import { Locks, roundTrip } from "./locks.js";

/**
 * The idempotency store in this process's memory: the contract of the PostgreSQL one
 * (src/store/testing/idempotency-suite.ts runs on both). A claim decides under the key's lock, as
 * the SQL does under the key's row lock, so of racing claims exactly one wins.
 */

interface KeyRow {
  wallet: string | null;
  fingerprint: string;
  state: "in-progress" | "complete";
  response: unknown;
  expiresAt: number;
  owner: string | null;
  leaseUntil: number | null;
  requestId: string | null;
}

export class MemoryIdempotencyStore implements IdempotencyStore {
  private readonly keys = new Map<string, KeyRow>();
  private readonly locks = new Locks();
  private claims = 0;

  /** How many keys it keeps (expired ones included, until purged). */
  get size(): number {
    return this.keys.size;
  }

  async claimIdempotencyKey(claim: IdempotencyClaim): Promise<IdempotencyState> {
    if (this.claims++ % PURGE_EVERY === 0) this.purge(claim.now.getTime());
    return this.locks.with([claim.key], async () => {
      await roundTrip();
      const now = claim.now.getTime();
      const held = {
        owner: claim.owner,
        leaseUntil: now + claim.leaseMs,
        requestId: claim.requestId ?? null,
      };
      const row = this.keys.get(claim.key);
      if (!row || row.expiresAt <= now) {
        this.keys.set(claim.key, {
          wallet: claim.wallet,
          fingerprint: claim.fingerprint,
          state: "in-progress",
          response: null,
          expiresAt: now + IDEMPOTENCY_TTL_MS,
          ...held,
        });
        return { state: "new" };
      }
      if (row.fingerprint !== claim.fingerprint || row.wallet !== claim.wallet) return { state: "conflict" };
      if (row.state === "complete") return { state: "replay", response: structuredClone(row.response) };
      if (row.leaseUntil !== null && row.leaseUntil > now) return { state: "in-progress" };
      // The key keeps naming the earlier attempt until this one runs afresh (adoptIdempotencyKey).
      Object.assign(row, { owner: held.owner, leaseUntil: held.leaseUntil });
      return { state: "taken-over", requestId: row.requestId };
    });
  }

  async renewIdempotencyKey(key: string, owner: string, now: Date, leaseMs: number): Promise<boolean> {
    return this.ifHeld(key, owner, (row) => {
      row.leaseUntil = now.getTime() + leaseMs;
      return true;
    });
  }

  async adoptIdempotencyKey(key: string, owner: string, requestId: string): Promise<boolean> {
    return this.ifHeld(key, owner, (row) => {
      row.requestId = requestId;
      return true;
    });
  }

  /** As the PostgreSQL store: keys past their time, a batch at a time. */
  private purge(now: number): void {
    let left = PURGE_BATCH;
    for (const [key, row] of this.keys) {
      if (left === 0) return;
      if (row.expiresAt <= now) {
        this.keys.delete(key);
        left--;
      }
    }
  }

  async completeIdempotencyKey(key: string, owner: string, response: unknown): Promise<void> {
    await this.locks.with([key], async () => {
      await roundTrip();
      const row = this.keys.get(key);
      // The first outcome stored is the one replayed, and only its owner's.
      if (row?.state !== "in-progress" || row.owner !== owner) return;
      Object.assign(row, {
        state: "complete",
        response: storable(structuredClone(response ?? null)), // as PostgreSQL keeps it
        owner: null,
        leaseUntil: null,
      });
    });
  }

  async releaseIdempotencyKey(key: string, owner: string): Promise<void> {
    await this.ifHeld(key, owner, () => this.keys.delete(key));
  }

  async lapseIdempotencyKey(key: string, owner: string, now: Date, requestId?: string): Promise<void> {
    await this.ifHeld(key, owner, (row) => {
      row.leaseUntil = now.getTime();
      if (requestId !== undefined) row.requestId = requestId;
      return true;
    });
  }

  /** `change` on an in-progress key held by `owner`; false when it is not (done, gone, another's). */
  private async ifHeld(key: string, owner: string, change: (row: KeyRow) => boolean): Promise<boolean> {
    return this.locks.with([key], async () => {
      await roundTrip();
      const row = this.keys.get(key);
      if (row?.state !== "in-progress" || row.owner !== owner) return false;
      return change(row);
    });
  }
}
