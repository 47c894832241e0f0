import type { KeyRecord } from "./keys.js";

/**
 * Where operator keys and pauses are kept (src/store implements it: PostgreSQL/PGlite, migration
 * 10, and in memory). Every instance reads it whole on its refresh (cache.ts): the tables are small.
 */

/** A pause: every payment (`all`), or one key's. */
export interface PauseRecord {
  scope: "all" | "key";
  /** With `key`: the key's name. */
  key: string | null;
  reason: string;
  /** Who paused (the operator API's caller, or the CLI's user). */
  by: string;
  since: Date;
}

/** A payment as the operator reads it (GET /api/operator/payments, /unclear). */
export interface OperatorPaymentRow {
  paymentId: string;
  caller: string | null;
  wallet: string;
  service: string;
  network: string;
  amount: bigint;
  status: string;
  createdAt: Date;
  updatedAt: Date;
  txHash: string | null;
  /** The end of an approval's window (a payment awaiting approval), else null. */
  expiresAt: Date | null;
}

export interface OperatorStore {
  listKeys(): Promise<KeyRecord[]>;
  /** Inserts the key; false when the name is taken (nothing written). */
  createKey(key: KeyRecord): Promise<boolean>;
  /** Marks it revoked at `at` (kept revoked if it was); undefined for an unknown name. */
  revokeKey(name: string, at: Date): Promise<KeyRecord | undefined>;
  /**
   * Replaces its token's hash (the old token stops working); undefined for an unknown name or a
   * revoked key (checked in the same write, so a revoke racing it wins).
   */
  /** The new token's hash, only while the key is active and still has `previousHash` (else undefined). */
  rotateKey(name: string, previousHash: string, tokenHash: string, at: Date): Promise<KeyRecord | undefined>;
  listPauses(): Promise<PauseRecord[]>;
  /** Sets (or replaces) the pause of its scope. */
  setPause(pause: PauseRecord): Promise<void>;
  /** Lifts the pause of that scope; false when there was none. */
  clearPause(scope: "all" | "key", key: string | null): Promise<boolean>;
  /** Payments newest first, at most `limit`, in these statuses (absent: any). */
  payments(query: { limit: number; statuses?: readonly string[] }): Promise<OperatorPaymentRow[]>;
  /** What a caller committed (spent or pending) since `since`, atomic USD. */
  committedSince(caller: string, since: Date): Promise<bigint>;
}
