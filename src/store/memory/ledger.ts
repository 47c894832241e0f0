import {
  type ApproveInput,
  type ApproveResult,
  type AwaitInput,
  type BudgetSnapshot,
  DuplicatePaymentError,
  type HistoryQuery,
  type Ledger,
  type LedgerReads,
  ownsPayment,
  type PaymentHistory,
  PaymentNotFoundError,
  type PaymentRecord,
  type ReserveInput,
  type ReserveResult,
  SameTransactionError,
  type SpendingSummary,
  type StatusEntry,
  type TransitionFields,
  transactionKeyOf,
} from "../../payments/ports/index.js";
import {
  assertTransition,
  checkSpend,
  committedOf,
  IllegalTransitionError,
  type LedgerStatus,
  type SpendLimits,
} from "../../payments/rules/index.js";
import { INTENT_STEPS } from "../../protocol/index.js";
import { storable } from "../storable.js";
import { Locks, roundTrip } from "./locks.js";
import { SpendTotals } from "./totals.js";

/**
 * The Ledger in this process's memory: the same contract as the PostgreSQL ledger
 * (src/store/testing/ledger-suite.ts runs on both), for tests of the payment core that need no
 * database, and for a process that may forget its payments on exit. Nothing survives a restart.
 *
 * Concurrency: every method is async and pauses where PostgreSQL would wait on the network, so
 * calls interleave; what the SQL decides under a row lock is decided here under the lock of the
 * same row (`wallet:` for a wallet's budget, `caller:` for a caller's with a caller cap, `payment:`
 * for a payment), taken in the same order.
 * Records go in and out as copies, as rows would: a caller cannot change what is stored.
 */
export class MemoryLedger implements Ledger, LedgerReads, PaymentHistory {
  private readonly rows = new Map<string, PaymentRecord>();
  private readonly totals = new SpendTotals();
  private readonly locks = new Locks();

  async reserve(input: ReserveInput): Promise<ReserveResult> {
    if (input.amount < 0n) throw new RangeError("reserve: amount must not be negative");
    if (input.tab) throw new Error("tabs are kept on PostgreSQL only (migration 13)");
    const caller = capped(input.caller ?? null, input.limits);
    return this.locks.with([`wallet:${input.wallet}`, ...callerLock(caller)], async () => {
      const budget = this.snapshot(input.wallet, input.scopeId, input.now, caller);
      await roundTrip();
      // A taken id is a duplicate, whatever the limits it would meet (ledger-calls.ts).
      if (this.rows.has(input.paymentId)) throw new DuplicatePaymentError(input.paymentId);
      const check = checkSpend(input.amount, input.limits, committedOf(budget));
      if (!check.ok) return { ...check, budget };
      // As migration 17's unique index: one signed Solana transaction, one payment.
      const sameTx = transactionKeyOf(input.intent?.authorization);
      if (sameTx && [...this.rows.values()].some((r) => transactionKeyOf(r.authorization) === sameTx))
        throw new SameTransactionError(input.paymentId);
      const steps: LedgerStatus[] = input.intent ? [...INTENT_STEPS] : ["reserved"];
      const record = newRecord(input, steps, {
        authorization: input.intent ? (input.intent.authorization ?? null) : null,
        approval: null,
        caller: input.caller ?? null,
        expiresAt: null,
      });
      this.write(record);
      return { ok: true, budget, payment: structuredClone(record) };
    });
  }

  async recordAwaiting(input: AwaitInput): Promise<PaymentRecord> {
    if (input.amount < 0n) throw new RangeError("recordAwaiting: amount must not be negative");
    await roundTrip();
    if (this.rows.has(input.paymentId)) throw new DuplicatePaymentError(input.paymentId);
    const record = newRecord(input, ["awaiting_approval"], {
      authorization: null,
      approval: input.approval ?? null,
      caller: input.caller,
      expiresAt: input.expiresAt,
    });
    this.write(record);
    return structuredClone(record);
  }

  async approve(input: ApproveInput): Promise<ApproveResult> {
    await roundTrip();
    const found = this.rows.get(input.paymentId);
    if (!found) return { ok: false, notAwaiting: "missing" };
    const { paymentId, now } = input;
    const caller = capped(found.caller, input.limits);
    const locks = [`wallet:${found.wallet}`, ...callerLock(caller), `payment:${paymentId}`];
    return this.locks.with(locks, async () => {
      const row = this.rows.get(paymentId);
      if (!row) return { ok: false, notAwaiting: "missing" };
      if (row.status !== "awaiting_approval") return { ok: false, notAwaiting: row.status };
      if (row.expiresAt && row.expiresAt.getTime() <= now.getTime()) {
        return { ok: false, notAwaiting: "expired" };
      }
      const budget = this.snapshot(row.wallet, row.scopeId, now, caller);
      await roundTrip();
      const check = checkSpend(row.amount, input.limits, committedOf(budget));
      if (!check.ok) return check;
      const sameTx = transactionKeyOf(input.authorization);
      if (sameTx && [...this.rows.values()].some((r) => transactionKeyOf(r.authorization) === sameTx))
        throw new SameTransactionError(paymentId);
      const at = now.toISOString();
      const steps = INTENT_STEPS.map((status) => ({ status, at }));
      this.write({
        ...row,
        status: "submitted",
        history: [...row.history, ...steps],
        authorization: input.authorization ?? null,
        updatedAt: now,
      });
      return { ok: true, payment: structuredClone(this.rows.get(paymentId) as PaymentRecord) };
    });
  }

  async transition(
    paymentId: string,
    to: LedgerStatus,
    fields: TransitionFields,
    now: Date,
    only?: LedgerStatus,
  ): Promise<void> {
    if (only !== undefined) assertTransition(only, to);
    await this.locks.with([`payment:${paymentId}`], async () => {
      await roundTrip();
      const row = this.rows.get(paymentId);
      if (!row) throw new PaymentNotFoundError(paymentId);
      if (only !== undefined && row.status !== only) throw new IllegalTransitionError(row.status, to);
      assertTransition(row.status, to);
      const entry: StatusEntry = { status: to, at: now.toISOString() };
      if (fields.txHash !== undefined) entry.txHash = fields.txHash;
      if (fields.payer !== undefined) entry.payer = fields.payer;
      if (fields.error !== undefined) entry.error = fields.error;
      this.write({
        ...row,
        status: to,
        history: [...row.history, entry],
        txHash: fields.txHash ?? row.txHash,
        payer: fields.payer ?? row.payer,
        error: fields.error ?? row.error,
        authorization: fields.authorization === undefined ? row.authorization : fields.authorization,
        updatedAt: now,
        settledAt: to === "settled" ? now : row.settledAt,
      });
    });
  }

  async get(paymentId: string): Promise<PaymentRecord | undefined> {
    await roundTrip();
    const row = this.rows.get(paymentId);
    return row ? structuredClone(row) : undefined;
  }

  async listByStatus(statuses: readonly LedgerStatus[]): Promise<PaymentRecord[]> {
    return this.list((row) => statuses.includes(row.status));
  }

  async listByScope(scopeId: string): Promise<PaymentRecord[]> {
    return this.list((row) => row.scopeId === scopeId);
  }

  async spending(wallet: string, now: Date): Promise<SpendingSummary> {
    await roundTrip();
    const read = this.totals.read(wallet, "", now);
    return {
      settled: read.daySettled,
      pending: read.dayPending,
      unknown: read.dayUnknown,
      today: read.daySettled + read.dayPending + read.dayUnknown,
    };
  }

  async budget(wallet: string, scopeId: string, now: Date, caller?: string): Promise<BudgetSnapshot> {
    await roundTrip();
    return this.snapshot(wallet, scopeId, now, caller ?? null);
  }

  /** A wallet's and a scope's sums, and the caller's over every wallet when one is given. */
  private snapshot(wallet: string, scopeId: string, now: Date, caller: string | null): BudgetSnapshot {
    const read = this.totals.read(wallet, scopeId, now);
    return {
      daySpent: read.daySettled + read.dayUnknown,
      dayPending: read.dayPending,
      requestSpent: read.requestSpent,
      requestPending: read.requestPending,
      ...(caller !== null ? this.totals.readCaller(caller, now) : {}),
    };
  }

  /** A caller's or a wallet's payments, newest first (PaymentHistory, as src/store/history.ts orders them). */
  async listHistory(query: HistoryQuery): Promise<PaymentRecord[]> {
    const { after, since, until, statuses } = query;
    const older = (row: PaymentRecord) =>
      !after ||
      row.createdAt < after.createdAt ||
      (row.createdAt.getTime() === after.createdAt.getTime() && row.paymentId < after.paymentId);
    const rows = await this.list(
      (row) =>
        ownsPayment(query, row) &&
        (!statuses?.length || statuses.includes(row.status)) &&
        (!since || row.createdAt >= since) &&
        (!until || row.createdAt < until) &&
        older(row),
    );
    return rows.reverse().slice(0, query.limit);
  }

  /** Oldest first, then by id, as the SQL orders them. */
  private async list(keep: (row: PaymentRecord) => boolean): Promise<PaymentRecord[]> {
    await roundTrip();
    return [...this.rows.values()]
      .filter(keep)
      .sort(
        (a, b) =>
          a.createdAt.getTime() - b.createdAt.getTime() ||
          (a.paymentId < b.paymentId ? -1 : a.paymentId > b.paymentId ? 1 : 0),
      )
      .map((row) => structuredClone(row));
  }

  /** One row's write and its totals, together (the triggers of migration 6). */
  private write(record: PaymentRecord): void {
    const before = this.rows.get(record.paymentId);
    const stored = storable(structuredClone(record)); // as PostgreSQL keeps it (storable.ts)
    this.rows.set(record.paymentId, stored);
    this.totals.move(before, stored);
  }
}

/** The caller whose cap applies (as the SQL: a caller and a cap), or null. */
const capped = (caller: string | null, limits: SpendLimits): string | null =>
  caller !== null && limits.callerDaily !== undefined ? caller : null;

/** The caller's lock, taken after the wallet's (migration 11's order), when its cap applies. */
const callerLock = (caller: string | null): string[] => (caller === null ? [] : [`caller:${caller}`]);

/** A new row whose history is `steps`, all at `input.now`; what differs by kind is given. */
function newRecord(
  input: ReserveInput | AwaitInput,
  steps: LedgerStatus[],
  rest: Pick<PaymentRecord, "authorization" | "approval" | "caller" | "expiresAt">,
): PaymentRecord {
  const at = input.now.toISOString();
  return {
    paymentId: input.paymentId,
    status: steps.at(-1) ?? "reserved",
    history: steps.map((status) => ({ status, at })),
    wallet: input.wallet,
    scopeId: input.scopeId,
    service: input.service,
    network: input.network,
    asset: input.asset,
    payTo: input.payTo,
    amount: input.amount,
    requirement: input.requirement ?? null,
    txHash: null,
    payer: null,
    error: null,
    createdAt: input.now,
    updatedAt: input.now,
    settledAt: null,
    ...rest,
  };
}
