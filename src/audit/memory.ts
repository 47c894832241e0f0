import { chainHash, GENESIS } from "./canonical.js";
import type { AuditRecord, AuditRow, AuditStore } from "./port.js";

/**
 * The audit trail in this process's memory (the memory store, tests): the same chain as
 * PostgreSQL's `audit_append`, computed here. Nothing is kept after the process ends.
 */
export class MemoryAuditStore implements AuditStore {
  /** The records, by seq; tests may change them to play an intruder. */
  readonly records: AuditRecord[] = [];

  async append(rows: readonly AuditRow[]): Promise<void> {
    for (const row of rows) {
      const head = this.records.at(-1);
      const prevHash = head?.hash ?? GENESIS;
      const { canonical, data, ...columns } = row;
      this.records.push({
        ...columns,
        data: structuredClone(data),
        seq: (head?.seq ?? 0) + 1,
        prevHash,
        hash: chainHash(prevHash, canonical),
      });
    }
  }

  async read(query: { after: number; limit: number; since?: Date }): Promise<AuditRecord[]> {
    const since = query.since?.getTime();
    return this.records
      .filter((r) => r.seq > query.after && (since === undefined || r.at.getTime() >= since))
      .sort((a, b) => a.seq - b.seq)
      .slice(0, query.limit)
      .map((r) => structuredClone(r));
  }

  async latest(kinds: readonly string[], limit: number): Promise<AuditRecord[]> {
    return this.records
      .filter((r) => kinds.includes(r.kind))
      .sort((a, b) => b.seq - a.seq)
      .slice(0, limit)
      .map((r) => structuredClone(r));
  }

  async seqOfHash(hash: string): Promise<number | undefined> {
    return this.records.find((r) => r.hash === hash)?.seq;
  }
}
