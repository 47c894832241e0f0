import { and, eq, inArray, lte } from "drizzle-orm";
import {
  IDEMPOTENCY_TTL_MS,
  type IdempotencyClaim,
  type IdempotencyState,
  type IdempotencyStore,
  PURGE_BATCH,
  PURGE_EVERY,
} from "../idempotency/index.js";
import type { Db } from "./migrate.js";
import { idempotencyKeys } from "./schema.js";
import { storable } from "./storable.js";

/**
 * The idempotency store (its port is src/idempotency, shared with the HTTP layer: the store does
 * not import HTTP) on the same PostgreSQL as the ledger, in its own table. An
 * in-progress key is held by an owner until `lease_until`; a lapsed lease is taken over by the next
 * claim (migration 7).
 */

export type { IdempotencyClaim, IdempotencyState, IdempotencyStore } from "../idempotency/index.js";

export class PgIdempotencyStore implements IdempotencyStore {
  private claims = 0;

  constructor(private readonly db: Db) {}

  async claimIdempotencyKey(claim: IdempotencyClaim): Promise<IdempotencyState> {
    if (this.claims++ % PURGE_EVERY === 0) await this.purge(claim.now).catch(() => {}); // tried again later
    const held = {
      owner: claim.owner,
      leaseUntil: new Date(claim.now.getTime() + claim.leaseMs),
      requestId: claim.requestId ?? null,
    };
    const fresh = {
      key: claim.key,
      wallet: claim.wallet,
      fingerprint: claim.fingerprint,
      state: "in-progress" as const,
      response: null,
      createdAt: claim.now,
      expiresAt: new Date(claim.now.getTime() + IDEMPOTENCY_TTL_MS),
      ...held,
    };
    return this.db.transaction(async (tx) => {
      // Concurrent inserts of one key queue on the unique index: exactly one wins. The row that
      // made an insert conflict may be released (deleted) before it is read: then insert again.
      let row: typeof idempotencyKeys.$inferSelect | undefined;
      for (let attempt = 0; !row; attempt++) {
        const inserted = await tx
          .insert(idempotencyKeys)
          .values(fresh)
          .onConflictDoNothing({ target: idempotencyKeys.key })
          .returning({ key: idempotencyKeys.key });
        if (inserted.length > 0) return { state: "new" as const };
        // The row lock serializes takers: the second reads the lease the first just renewed.
        [row] = await tx
          .select()
          .from(idempotencyKeys)
          .where(eq(idempotencyKeys.key, claim.key))
          .for("update");
        // Claimed and released over and over meanwhile: another attempt is at work (409, retry).
        if (!row && attempt >= 3) return { state: "in-progress" as const };
      }
      if (row.expiresAt.getTime() <= claim.now.getTime()) {
        await tx.update(idempotencyKeys).set(fresh).where(eq(idempotencyKeys.key, claim.key));
        return { state: "new" as const };
      }
      if (row.fingerprint !== claim.fingerprint || row.wallet !== claim.wallet)
        return { state: "conflict" as const };
      if (row.state === "complete") return { state: "replay" as const, response: row.response };
      // No lease (a claim made before leases existed) counts as lapsed.
      if (row.leaseUntil && row.leaseUntil.getTime() > claim.now.getTime()) {
        return { state: "in-progress" as const };
      }
      // The key keeps naming the earlier attempt until this one runs afresh (adoptIdempotencyKey).
      const { owner, leaseUntil } = held;
      await tx.update(idempotencyKeys).set({ owner, leaseUntil }).where(eq(idempotencyKeys.key, claim.key));
      return { state: "taken-over" as const, requestId: row.requestId };
    });
  }

  async renewIdempotencyKey(key: string, owner: string, now: Date, leaseMs: number): Promise<boolean> {
    const renewed = await this.db
      .update(idempotencyKeys)
      .set({ leaseUntil: new Date(now.getTime() + leaseMs) })
      .where(this.heldBy(key, owner))
      .returning({ key: idempotencyKeys.key });
    return renewed.length > 0;
  }

  async completeIdempotencyKey(key: string, owner: string, response: unknown): Promise<void> {
    // The first outcome stored is the one replayed, and only its owner's.
    await this.db
      .update(idempotencyKeys)
      .set({ state: "complete", response: storable(response ?? null), owner: null, leaseUntil: null })
      .where(this.heldBy(key, owner));
  }

  async adoptIdempotencyKey(key: string, owner: string, requestId: string): Promise<boolean> {
    const rows = await this.db
      .update(idempotencyKeys)
      .set({ requestId })
      .where(this.heldBy(key, owner))
      .returning({ key: idempotencyKeys.key });
    return rows.length > 0;
  }

  /** Keys past their 24 hours, a batch at a time: each would only be claimed afresh. */
  private async purge(now: Date): Promise<void> {
    const expired = this.db
      .select({ key: idempotencyKeys.key })
      .from(idempotencyKeys)
      .where(lte(idempotencyKeys.expiresAt, now))
      .limit(PURGE_BATCH);
    await this.db
      .delete(idempotencyKeys)
      .where(and(inArray(idempotencyKeys.key, expired), lte(idempotencyKeys.expiresAt, now)));
  }

  /** The key, while `owner` holds it in progress. */
  private heldBy(key: string, owner: string) {
    return and(
      eq(idempotencyKeys.key, key),
      eq(idempotencyKeys.owner, owner),
      eq(idempotencyKeys.state, "in-progress"),
    );
  }

  async releaseIdempotencyKey(key: string, owner: string): Promise<void> {
    await this.db.delete(idempotencyKeys).where(this.heldBy(key, owner));
  }

  async lapseIdempotencyKey(key: string, owner: string, now: Date, requestId?: string): Promise<void> {
    await this.db
      .update(idempotencyKeys)
      .set({ leaseUntil: now, ...(requestId !== undefined ? { requestId } : {}) })
      .where(this.heldBy(key, owner));
  }
}
