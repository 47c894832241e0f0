import type {
  KeyRecord,
  KeyScope,
  OperatorPaymentRow,
  OperatorStore,
  PauseRecord,
} from "../operator/index.js";
import type { PaymentRecord } from "../payments/ports/index.js";
import { isCommitted, LEDGER_STATUSES } from "../payments/rules/index.js";
import type { DriverQuery } from "./ledger-calls.js";

/**
 * Operator keys and pauses on PostgreSQL/PGlite (migration 10; the port is src/operator/port.ts).
 * Plain SQL on the driver: amounts are int8 read back as text, lists are jsonb.
 */

const KEY_COLUMNS = `name, token_hash, scopes, wallets, per_transaction::text AS per_transaction,
  per_request::text AS per_request, daily::text AS daily, created_at, created_by, expires_at, revoked_at`;

const date = (v: unknown): Date | null => (v === null || v === undefined ? null : new Date(v as string));
const big = (v: unknown): bigint | null => (v === null || v === undefined ? null : BigInt(v as string));
const json = <T>(v: unknown): T => (typeof v === "string" ? JSON.parse(v) : v) as T;

function keyOf(row: Record<string, unknown>): KeyRecord {
  return {
    name: row.name as string,
    tokenHash: row.token_hash as string,
    scopes: json<KeyScope[]>(row.scopes),
    wallets: row.wallets === null ? null : json<string[]>(row.wallets),
    perTransaction: big(row.per_transaction),
    perRequest: big(row.per_request),
    daily: big(row.daily),
    createdAt: date(row.created_at) as Date,
    createdBy: row.created_by as string,
    expiresAt: date(row.expires_at),
    revokedAt: date(row.revoked_at),
    ...(row.retired ? { retiredHashes: json<string[]>(row.retired) } : {}),
  };
}

/** The statuses that hold budget (spent or pending): what a key's spending counts. */
const COMMITTED: readonly string[] = LEDGER_STATUSES.filter((s) => isCommitted(s));

function paymentOf(row: Record<string, unknown>): OperatorPaymentRow {
  return {
    paymentId: row.payment_id as string,
    caller: (row.caller as string | null) ?? null,
    wallet: row.wallet as string,
    service: row.service as string,
    network: row.network as string,
    amount: BigInt(row.amount as string),
    status: row.status as string,
    createdAt: date(row.created_at) as Date,
    updatedAt: date(row.updated_at) as Date,
    txHash: (row.tx_hash as string | null) ?? null,
    expiresAt: date(row.expires_at) ?? null,
  };
}

const targetOf = (scope: "all" | "key", key: string | null) => (scope === "all" ? "all" : `key:${key}`);
const text = (v: bigint | null) => (v === null ? null : v.toString());

export class PgOperatorStore implements OperatorStore {
  constructor(private readonly query: DriverQuery) {}

  async listKeys(): Promise<KeyRecord[]> {
    const retired = `(SELECT jsonb_agg(r.token_hash) FROM operator_retired_tokens r
      WHERE r.key_name = operator_keys.name) AS retired`;
    return (await this.query(`SELECT ${KEY_COLUMNS}, ${retired} FROM operator_keys`, [])).map(keyOf);
  }

  async createKey(key: KeyRecord): Promise<boolean> {
    const rows = await this.query(
      `INSERT INTO operator_keys (name, token_hash, scopes, wallets, per_transaction, per_request, daily,
         created_at, created_by, expires_at, revoked_at)
       VALUES ($1, $2, $3::jsonb, $4::jsonb, $5::bigint, $6::bigint, $7::bigint, $8::timestamptz, $9,
         $10::timestamptz, NULL)
       ON CONFLICT (name) DO NOTHING RETURNING name`,
      [
        key.name,
        key.tokenHash,
        JSON.stringify(key.scopes),
        key.wallets === null ? null : JSON.stringify(key.wallets),
        text(key.perTransaction),
        text(key.perRequest),
        text(key.daily),
        key.createdAt.toISOString(),
        key.createdBy,
        key.expiresAt?.toISOString() ?? null,
      ],
    );
    return rows.length === 1;
  }

  async revokeKey(name: string, at: Date): Promise<KeyRecord | undefined> {
    const [row] = await this.query(
      `UPDATE operator_keys SET revoked_at = COALESCE(revoked_at, $2::timestamptz) WHERE name = $1
       RETURNING ${KEY_COLUMNS}`,
      [name, at.toISOString()],
    );
    return row ? keyOf(row) : undefined;
  }

  async rotateKey(
    name: string,
    previousHash: string,
    tokenHash: string,
    at: Date,
  ): Promise<KeyRecord | undefined> {
    // The old token is retired in the same statement: it never works again, wherever it is listed.
    const [row] = await this.query(
      `WITH rotated AS (
         UPDATE operator_keys SET token_hash = $2, rotated_at = $3::timestamptz
         WHERE name = $1 AND revoked_at IS NULL AND token_hash = $4
         RETURNING ${KEY_COLUMNS}
       ), retired AS (
         INSERT INTO operator_retired_tokens (token_hash, key_name, retired_at)
         SELECT $4, name, $3::timestamptz FROM rotated ON CONFLICT (token_hash) DO NOTHING
       )
       SELECT * FROM rotated`,
      [name, tokenHash, at.toISOString(), previousHash],
    );
    return row ? keyOf(row) : undefined;
  }

  async listPauses(): Promise<PauseRecord[]> {
    const rows = await this.query(
      "SELECT scope, key_name, reason, paused_by, since FROM operator_pauses ORDER BY since",
      [],
    );
    return rows.map((r) => ({
      scope: r.scope as "all" | "key",
      key: (r.key_name as string | null) ?? null,
      reason: r.reason as string,
      by: r.paused_by as string,
      since: date(r.since) as Date,
    }));
  }

  async setPause(pause: PauseRecord): Promise<void> {
    await this.query(
      `INSERT INTO operator_pauses (target, scope, key_name, reason, paused_by, since)
       VALUES ($1, $2, $3, $4, $5, $6::timestamptz)
       ON CONFLICT (target) DO UPDATE SET reason = EXCLUDED.reason, paused_by = EXCLUDED.paused_by,
         since = EXCLUDED.since`,
      [
        targetOf(pause.scope, pause.key),
        pause.scope,
        pause.key,
        pause.reason,
        pause.by,
        pause.since.toISOString(),
      ],
    );
  }

  async clearPause(scope: "all" | "key", key: string | null): Promise<boolean> {
    const rows = await this.query("DELETE FROM operator_pauses WHERE target = $1 RETURNING target", [
      targetOf(scope, key),
    ]);
    return rows.length === 1;
  }

  async payments(query: { limit: number; statuses?: readonly string[] }): Promise<OperatorPaymentRow[]> {
    const where = query.statuses ? "WHERE status = ANY(string_to_array($2, ','))" : "";
    const rows = await this.query(
      `SELECT payment_id, caller, wallet, service, network, amount::text AS amount, status, created_at,
         updated_at, tx_hash, expires_at FROM payments ${where} ORDER BY created_at DESC, payment_id DESC LIMIT $1`,
      query.statuses ? [query.limit, query.statuses.join(",")] : [query.limit],
    );
    return rows.map(paymentOf);
  }

  async committedSince(caller: string, since: Date): Promise<bigint> {
    const [row] = await this.query(
      `SELECT COALESCE(sum(amount), 0)::text AS total FROM payments
       WHERE caller = $1 AND created_at > $2::timestamptz AND status = ANY(string_to_array($3, ','))`,
      [caller, since.toISOString(), COMMITTED.join(",")],
    );
    return BigInt((row?.total as string | undefined) ?? "0");
  }
}

/** The same in this process's memory (the memory store, tests). */
export class MemoryOperatorStore implements OperatorStore {
  /** `ledger`: the memory ledger the payment reads come from (none: no payments). */
  constructor(
    private readonly ledger?: {
      listByStatus(s: readonly PaymentRecord["status"][]): Promise<PaymentRecord[]>;
    },
  ) {}

  private readonly keys = new Map<string, KeyRecord>();
  private readonly pauses = new Map<string, PauseRecord>();

  async listKeys(): Promise<KeyRecord[]> {
    return [...this.keys.values()].map((k) => ({ ...k }));
  }

  async createKey(key: KeyRecord): Promise<boolean> {
    if (this.keys.has(key.name)) return false;
    this.keys.set(key.name, { ...key });
    return true;
  }

  async revokeKey(name: string, at: Date): Promise<KeyRecord | undefined> {
    const key = this.keys.get(name);
    if (!key) return undefined;
    key.revokedAt ??= at;
    return { ...key };
  }

  async rotateKey(name: string, previousHash: string, tokenHash: string): Promise<KeyRecord | undefined> {
    const key = this.keys.get(name);
    if (!key || key.revokedAt || key.tokenHash !== previousHash) return undefined;
    key.tokenHash = tokenHash;
    key.retiredHashes = [...(key.retiredHashes ?? []), previousHash];
    return { ...key };
  }

  async listPauses(): Promise<PauseRecord[]> {
    return [...this.pauses.values()].map((p) => ({ ...p }));
  }

  async setPause(pause: PauseRecord): Promise<void> {
    this.pauses.set(targetOf(pause.scope, pause.key), { ...pause });
  }

  async clearPause(scope: "all" | "key", key: string | null): Promise<boolean> {
    return this.pauses.delete(targetOf(scope, key));
  }

  async payments(query: { limit: number; statuses?: readonly string[] }): Promise<OperatorPaymentRow[]> {
    const statuses = LEDGER_STATUSES.filter((s) => !query.statuses || query.statuses.includes(s));
    const rows = (await this.ledger?.listByStatus(statuses)) ?? [];
    rows.sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime());
    return rows.slice(0, query.limit).map((r) => ({
      paymentId: r.paymentId,
      caller: r.caller,
      wallet: r.wallet,
      service: r.service,
      network: r.network,
      amount: r.amount,
      status: r.status,
      createdAt: r.createdAt,
      updatedAt: r.updatedAt,
      txHash: r.txHash,
      expiresAt: r.expiresAt,
    }));
  }

  async committedSince(caller: string, since: Date): Promise<bigint> {
    const rows = (await this.ledger?.listByStatus(COMMITTED as PaymentRecord["status"][])) ?? [];
    return rows
      .filter((r) => r.caller === caller && r.createdAt.getTime() > since.getTime())
      .reduce((sum, r) => sum + r.amount, 0n);
  }
}
