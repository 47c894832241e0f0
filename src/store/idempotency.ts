import { and, eq } from "drizzle-orm";
import type { Db } from "./migrations.js";
import { idempotencyKeys } from "./schema.js";

/**
 * The HTTP layer's idempotency store (its port is src/http/idempotency.ts, matched structurally:
 * the store does not import HTTP) on the same PostgreSQL as the ledger, in its own table.
 */

/** How long an idempotency key is remembered (the port documents the same 24 h). */
const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

export interface IdempotencyClaim {
  key: string;
  wallet: string | null;
  fingerprint: string;
  now: Date;
}

export type IdempotencyState =
  | { state: "new" }
  | { state: "in-progress" }
  | { state: "replay"; response: unknown }
  | { state: "conflict" };

export class PgIdempotencyStore {
  constructor(private readonly db: Db) {}

  async claimIdempotencyKey(claim: IdempotencyClaim): Promise<IdempotencyState> {
    const fresh = {
      key: claim.key,
      wallet: claim.wallet,
      fingerprint: claim.fingerprint,
      state: "in-progress" as const,
      response: null,
      createdAt: claim.now,
      expiresAt: new Date(claim.now.getTime() + IDEMPOTENCY_TTL_MS),
    };
    return this.db.transaction(async (tx) => {
      // Concurrent inserts of one key queue on the unique index: exactly one wins.
      const inserted = await tx
        .insert(idempotencyKeys)
        .values(fresh)
        .onConflictDoNothing({ target: idempotencyKeys.key })
        .returning({ key: idempotencyKeys.key });
      if (inserted.length > 0) return { state: "new" as const };

      const [row] = await tx
        .select()
        .from(idempotencyKeys)
        .where(eq(idempotencyKeys.key, claim.key))
        .for("update");
      if (!row) throw new Error("idempotency key vanished while locked");
      if (row.expiresAt.getTime() <= claim.now.getTime()) {
        await tx.update(idempotencyKeys).set(fresh).where(eq(idempotencyKeys.key, claim.key));
        return { state: "new" as const };
      }
      if (row.fingerprint !== claim.fingerprint || row.wallet !== claim.wallet)
        return { state: "conflict" as const };
      if (row.state === "complete") return { state: "replay" as const, response: row.response };
      return { state: "in-progress" as const };
    });
  }

  async completeIdempotencyKey(key: string, response: unknown): Promise<void> {
    await this.db
      .update(idempotencyKeys)
      .set({ state: "complete", response: response ?? null })
      .where(eq(idempotencyKeys.key, key));
  }

  async releaseIdempotencyKey(key: string): Promise<void> {
    await this.db
      .delete(idempotencyKeys)
      .where(and(eq(idempotencyKeys.key, key), eq(idempotencyKeys.state, "in-progress")));
  }
}
