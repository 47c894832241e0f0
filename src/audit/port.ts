/**
 * The audit trail's storage port, defined once: src/audit uses it, src/store implements it on
 * PostgreSQL (migration 12, `audit_append`) and src/audit/memory.ts in memory. Neither imports the
 * other: both import this.
 */

/** A record as it is appended: its canonical text is what the chain hashes (canonical.ts). */
export interface AuditRow {
  at: Date;
  kind: string;
  caller: string | null;
  requestId: string | null;
  paymentId: string | null;
  /** Plain JSON (normalised by canonical.ts: no bigint, no undefined, no NUL). */
  data: Record<string, unknown>;
  canonical: string;
}

/** A record as it is stored: numbered and chained. */
export interface AuditRecord {
  seq: number;
  at: Date;
  kind: string;
  caller: string | null;
  requestId: string | null;
  paymentId: string | null;
  data: Record<string, unknown>;
  /** The hash of the record before (64 zeros for the first). */
  prevHash: string;
  /** sha256(prevHash || canonical), hex. */
  hash: string;
  /**
   * Microseconds past the millisecond in the stored time, where the store keeps them: the chain's
   * times are whole milliseconds (what the hash covers), so any is an edit.
   */
  subMs?: number;
}

export interface AuditStore {
  /**
   * Append rows in this order after the chain's head, in one transaction, serialised with every
   * other appender of the same database (one chain, whatever the number of instances).
   */
  append(rows: readonly AuditRow[]): Promise<void>;
  /** Up to `limit` records with `seq > after` (and `at >= since` when given), by seq. */
  read(query: { after: number; limit: number; since?: Date }): Promise<AuditRecord[]>;
  /** The newest records of these kinds, newest first. */
  latest(kinds: readonly string[], limit: number): Promise<AuditRecord[]>;
  /** The seq of a record with this hash, if any (how verify tells a reordered record from a removed one). */
  seqOfHash(hash: string): Promise<number | undefined>;
}
