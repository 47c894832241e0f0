import type { AuditRecord, AuditRow, AuditStore } from "../audit/port.js";
import type { DriverQuery } from "./ledger-calls.js";

/**
 * The audit trail on the ledger's PostgreSQL (the port is src/audit/port.ts; the table and
 * `audit_append` are migration 12). Appends are one call of the database function per batch, which
 * chains them after the head under an advisory lock; reads are by seq.
 */
export class PgAuditStore implements AuditStore {
  constructor(private readonly query: DriverQuery) {}

  async append(rows: readonly AuditRow[]): Promise<void> {
    if (rows.length === 0) return;
    const entries = rows.map((row) => ({
      at: row.at.toISOString(),
      kind: row.kind,
      caller: row.caller,
      request_id: row.requestId,
      payment_id: row.paymentId,
      data: row.data,
      canonical: row.canonical,
    }));
    await this.query("SELECT audit_append($1::jsonb) AS head", [JSON.stringify(entries)]);
  }

  async read(query: { after: number; limit: number; since?: Date }): Promise<AuditRecord[]> {
    const since = query.since ? " AND at >= $3" : "";
    const params: unknown[] = [query.after, query.limit, ...(query.since ? [query.since.toISOString()] : [])];
    const rows = await this.query(
      `SELECT ${COLUMNS} FROM audit_log WHERE seq > $1${since} ORDER BY audit_log.seq LIMIT $2`,
      params,
    );
    return rows.map(recordOf);
  }

  async latest(kinds: readonly string[], limit: number): Promise<AuditRecord[]> {
    const rows = await this.query(
      `SELECT ${COLUMNS} FROM audit_log WHERE kind = ANY(string_to_array($1, ',')) ORDER BY audit_log.seq DESC LIMIT $2`,
      [kinds.join(","), limit],
    );
    return rows.map(recordOf);
  }

  async seqOfHash(hash: string): Promise<number | undefined> {
    const [row] = await this.query("SELECT seq::text AS seq FROM audit_log WHERE hash = $1 LIMIT 1", [hash]);
    return row ? Number(row.seq) : undefined;
  }
}

/** seq as text (bigint, exact on every driver), data as text parsed here (one JSON reading everywhere). */
const COLUMNS =
  "seq::text AS seq, at, (extract(microseconds FROM at)::bigint % 1000)::int AS sub_ms, " +
  "kind, caller, request_id, payment_id, data::text AS data, prev_hash, hash";

function recordOf(row: Record<string, unknown>): AuditRecord {
  const at = row.at instanceof Date ? row.at : new Date(String(row.at));
  return {
    seq: Number(row.seq),
    at,
    kind: String(row.kind),
    caller: row.caller === null ? null : String(row.caller),
    requestId: row.request_id === null ? null : String(row.request_id),
    paymentId: row.payment_id === null ? null : String(row.payment_id),
    data: JSON.parse(String(row.data)) as Record<string, unknown>,
    prevHash: String(row.prev_hash),
    hash: String(row.hash),
    ...(Number(row.sub_ms) ? { subMs: Number(row.sub_ms) } : {}),
  };
}
