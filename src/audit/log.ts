import { canonicalOf, normalise } from "./canonical.js";
import type { AuditRecord, AuditRow, AuditStore } from "./port.js";
import { type VerifyReport, verifyChain } from "./verify.js";

/** What is appended: one money decision or operator action (docs/audit.md#what-is-recorded). */
export interface AuditEntry {
  at: Date;
  /** `payment.settled`, `approval.answered`, `key.revoked`... */
  kind: string;
  /** Who: the bearer identity (key name) of the payment, or the operator. */
  caller?: string | null;
  /** The request (chat request, MCP session) the record belongs to. */
  requestId?: string | null;
  paymentId?: string | null;
  /** Plain facts; never a key, a token or a signature (the builders in watcher.ts pick each field). */
  data?: Record<string, unknown>;
}

/** An operator action, as the operator tools report it. */
export interface ControlEvent {
  kind: "key.created" | "key.revoked" | "key.rotated" | "pause.set" | "pause.cleared";
  at: Date | string;
  /** Who did it: the operator (the CLI's user, the operator API's caller). */
  by: string;
  /** The key's name (never its token). */
  key?: string;
  /** A pause's scope: "all" or "key". */
  scope?: string;
  reason?: string;
}

/** An operator action as an audit record: the operator as its caller, the key's name, never a token. */
export function controlEntry(event: ControlEvent): AuditEntry {
  return {
    at: typeof event.at === "string" ? new Date(event.at) : event.at,
    kind: event.kind,
    caller: event.by,
    data: { key: event.key, scope: event.scope, reason: event.reason },
  };
}

/** A record as export writes it: one JSON line each. */
export interface ExportedRecord {
  seq: number;
  at: string;
  kind: string;
  caller: string | null;
  requestId: string | null;
  paymentId: string | null;
  data: Record<string, unknown>;
  prevHash: string;
  hash: string;
}

/** A refusal as the operator API lists it (GET /api/operator/refusals). */
export interface Refusal {
  at: string;
  caller: string | null;
  reason: string;
  message: string;
  service: string | null;
  amountUsd: string | null;
}

export interface AuditLogOptions {
  store: AuditStore;
  /** A write that failed (it is retried), records dropped or lost: for the logs. */
  onError?: (error: unknown, context: string) => void;
  /** Records per database call (default 200). */
  batchSize?: number;
  /** Records held while the database is away before the oldest are dropped (default 10,000). */
  maxQueued?: number;
  /** Wait before a failed write is tried again (default 1 s). */
  retryMs?: number;
  /** How long `close()` may wait for the last writes (default 5 s): a store that is down does not hold shutdown. */
  closeTimeoutMs?: number;
}

const text = (value: string | null | undefined): string | null =>
  value === undefined || value === null ? null : (normalise(value) as string);

/** An entry as it is stored, with its canonical text. */
export function rowOf(entry: AuditEntry): AuditRow {
  const fields = {
    at: new Date(entry.at.getTime()),
    kind: normalise(entry.kind) as string,
    caller: text(entry.caller),
    requestId: text(entry.requestId),
    paymentId: text(entry.paymentId),
    data: (normalise(entry.data ?? {}) ?? {}) as Record<string, unknown>,
  };
  return { ...fields, canonical: canonicalOf(fields) };
}

export function exported(record: AuditRecord): ExportedRecord {
  return { ...record, at: record.at.toISOString() };
}

/**
 * The audit trail (docs/audit.md): `append` queues a record and returns at once; records are
 * written in the order appended, in batches, one write at a time, off the payment's path (the
 * ledger row is the money record). A failed write is kept and tried again; past `maxQueued` the
 * oldest are dropped and an `audit.dropped` record says how many. `close()` writes what is queued.
 */
export class AuditLog {
  private queue: AuditRow[] = [];
  private writing: Promise<boolean> | undefined;
  private retry: ReturnType<typeof setTimeout> | undefined;
  private dropped = 0;
  /** Records taken from the queue by the write under way. */
  private inFlight = 0;
  private closed = false;
  private lastError: unknown;

  constructor(private readonly options: AuditLogOptions) {}

  /** Queue a record; never throws, never waits. */
  append(entry: AuditEntry): void {
    if (this.closed) {
      this.options.onError?.(new Error(`audit record ${entry.kind} after close: not written`), "audit");
      return;
    }
    let row: AuditRow;
    try {
      row = rowOf(entry);
    } catch (error) {
      this.options.onError?.(error, "audit record");
      return;
    }
    if (this.queue.length >= (this.options.maxQueued ?? 10_000)) {
      this.queue.shift();
      this.dropped++;
    }
    this.queue.push(row);
    if (!this.writing && !this.retry) this.writing = this.write();
  }

  /** Write everything queued now; throws when the database refuses (the records stay queued). */
  async flush(): Promise<void> {
    if (this.retry) clearTimeout(this.retry);
    this.retry = undefined;
    while (this.queue.length > 0 || this.dropped > 0 || this.writing) {
      this.writing ??= this.write();
      if (!(await this.writing)) throw this.lastError;
    }
  }

  /** Write what is queued (for at most `closeTimeoutMs`), then take no more; what is left is reported lost. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<Error>((resolve) => {
      timer = setTimeout(
        () => resolve(new Error("the store did not answer in time")),
        this.options.closeTimeoutMs ?? 5000,
      );
    });
    const failed = await Promise.race([
      this.flush().then(
        () => undefined,
        (error: unknown) => error,
      ),
      late,
    ]);
    clearTimeout(timer);
    if (this.retry) clearTimeout(this.retry);
    this.retry = undefined;
    const left = this.queue.length + this.dropped + this.inFlight;
    if (failed || left > 0) this.options.onError?.(failed, `audit: ${left} records not written at close`);
  }

  /** An operator action (a key created, revoked or rotated, a pause set or cleared), queued. */
  appendControl(event: ControlEvent): void {
    this.append(controlEntry(event));
  }

  verify(): Promise<VerifyReport> {
    return verifyChain(this.options.store);
  }

  /** Every record from `since` on, in chain order. */
  async *export(since: Date = new Date(0)): AsyncIterable<ExportedRecord> {
    let after = 0;
    for (;;) {
      const page = await this.options.store.read({ after, limit: 500, since });
      for (const record of page) yield exported(record);
      const last = page.at(-1);
      if (!last || page.length < 500) return;
      after = last.seq;
    }
  }

  /** The newest refusals, newest first (refused payments and payments refused before they existed). */
  async refusals(limit: number): Promise<Refusal[]> {
    const records = await this.options.store.latest(["payment.refused"], limit);
    return records.map((r) => {
      const str = (key: string) => (typeof r.data[key] === "string" ? (r.data[key] as string) : null);
      return {
        at: r.at.toISOString(),
        caller: r.caller,
        reason: str("reason") ?? "unknown",
        message: str("message") ?? "",
        service: str("service"),
        amountUsd: str("amountUsd"),
      };
    });
  }

  /** One write after another until the queue is empty; false (and a retry later) when one fails. */
  private async write(): Promise<boolean> {
    await Promise.resolve(); // let the appends of this tick join the batch
    let batch: AuditRow[] = [];
    try {
      while (this.queue.length > 0 || this.dropped > 0) {
        batch = this.queue.splice(0, this.options.batchSize ?? 200);
        const dropped = this.dropped;
        const note =
          dropped > 0 ? [rowOf({ at: new Date(), kind: "audit.dropped", data: { count: dropped } })] : [];
        this.inFlight = batch.length;
        await this.options.store.append([...note, ...batch]);
        this.dropped -= dropped;
        this.inFlight = 0;
        batch = [];
      }
      return true;
    } catch (error) {
      // The batch goes back in front, in order; the oldest beyond the bound are dropped (and said).
      this.inFlight = 0;
      this.queue.unshift(...batch);
      const over = this.queue.length - (this.options.maxQueued ?? 10_000);
      if (over > 0) {
        this.queue.splice(0, over);
        this.dropped += over;
      }
      this.lastError = error;
      this.options.onError?.(error, `audit: writing ${this.queue.length} records failed; trying again`);
      if (!this.closed) {
        this.retry = setTimeout(() => {
          this.retry = undefined;
          this.writing ??= this.write();
        }, this.options.retryMs ?? 1000);
        this.retry.unref?.();
      }
      return false;
    } finally {
      this.writing = undefined;
    }
  }
}
