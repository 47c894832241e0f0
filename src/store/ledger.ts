import { asc, eq, inArray } from "drizzle-orm";
import {
  type ApproveInput,
  type ApproveResult,
  type AwaitInput,
  type BudgetSnapshot,
  DAILY_WINDOW_MS,
  type Ledger,
  type LedgerReads,
  PaymentNotFoundError,
  type PaymentRecord,
  type ReserveInput,
  type ReserveResult,
  type SpendingSummary,
  type StatusEntry,
  type TransitionFields,
} from "../payments/ports/index.js";
import {
  assertTransition,
  canTransition,
  checkSpend,
  committedOf,
  IllegalTransitionError,
  LEDGER_STATUSES,
  type LedgerStatus,
} from "../payments/rules/index.js";
import type { Db } from "./migrate.js";
import { payments } from "./schema.js";

/**
 * The Ledger on PostgreSQL through Drizzle. Works the same on PGlite and on a server: every
 * decision that must hold under concurrency is taken inside a transaction holding a row lock.
 */

type PaymentRow = typeof payments.$inferSelect;

function toRecord(row: PaymentRow): PaymentRecord {
  return { ...row, authorization: row.authorization ?? null, approval: row.approval ?? null };
}

/** The budget sums a query returns as text (exact), by the snapshot field they fill. */
const SNAPSHOT_COLUMNS = {
  day_spent: "daySpent",
  day_pending: "dayPending",
  request_spent: "requestSpent",
  request_pending: "requestPending",
} as const;

function snapshotOf(row: Partial<Record<keyof typeof SNAPSHOT_COLUMNS, string>>): BudgetSnapshot {
  const snapshot = { daySpent: 0n, dayPending: 0n, requestSpent: 0n, requestPending: 0n };
  for (const [column, field] of Object.entries(SNAPSHOT_COLUMNS)) {
    snapshot[field] = BigInt(row[column as keyof typeof SNAPSHOT_COLUMNS] ?? "0");
  }
  return snapshot;
}

/**
 * The driver's own query (`$1` parameters, rows as objects), for the two calls on every payment's
 * critical path: it skips Drizzle's query building, about 0.2 ms a call on PGlite
 * (docs/benchmarks.md). Everything else goes through Drizzle.
 */
export type DriverQuery = (text: string, params: readonly unknown[]) => Promise<Record<string, unknown>[]>;

/**
 * The reservation's statement: `reserve_payment` of migration 6, on the running totals, recording
 * the caller (what counts and how the day is cut lives in the migration's triggers and `read_spend`).
 */
const RESERVE_SQL = `select outcome, day_spent, day_pending, request_spent, request_pending
  from reserve_payment($1, $2, $3, $4, $5, $6, $7, $8::numeric, $9::jsonb, $10::jsonb, $11,
    $12::jsonb, $13::timestamptz, $14::timestamptz, $15::numeric, $16::numeric, $17::numeric,
    $18::text)`;

/** Approving: `approve_payment` of migration 6. */
const APPROVE_SQL = `select outcome, amount, day_spent, day_pending, request_spent, request_pending
  from approve_payment($1, $2::jsonb, $3::jsonb, $4::timestamptz, $5::timestamptz, $6::numeric,
    $7::numeric, $8::numeric)`;

/** The running totals of a wallet's day and a request (migration 6), as exact text. */
const READ_SQL = `select day_pending::text, day_settled::text, day_unknown::text,
  request_pending::text, request_spent::text from read_spend($1, $2, $3::timestamptz)`;

/**
 * A status move: `move_payment` of migration 6 (migration 4's, and whether the commit waits for
 * the log flush: every move does but `settled`, see migration 6).
 */
const MOVE_SQL = `select move_payment($1, $2, $3::text[], $4::jsonb, $5, $6, $7, $8::jsonb,
  $9::timestamptz, $10::boolean) as status`;

/** A Postgres array literal of plain words (statuses). */
const textArray = (words: readonly string[]) => `{${words.join(",")}}`;

export interface PgLedgerOptions {
  /**
   * Whether a move to `settled` may commit without waiting for the log flush (migration 6). Only
   * for a PostgreSQL server, whose crash is rarer than ours and leaves the row `submitted` for the
   * reconciler: embedded PGlite runs inside this process, so a kill -9 of the service would lose
   * the unflushed settlement and a replay after the crash could not show it.
   */
  lazySettle?: boolean;
}

export class PgLedger implements Ledger, LedgerReads {
  constructor(
    private readonly db: Db,
    private readonly query: DriverQuery,
    private readonly options: PgLedgerOptions = {},
  ) {}

  /**
   * Check-and-reserve in one call of `reserve_payment` (migrations/): lock the wallet's budget
   * row, sum what counts as spent, insert the row if the amount fits. A refusal is explained by
   * checkSpend on the sums the function read, so the message and the decision agree.
   */
  async reserve(input: ReserveInput): Promise<ReserveResult> {
    if (input.amount < 0n) throw new RangeError("reserve: amount must not be negative");
    const since = new Date(input.now.getTime() - DAILY_WINDOW_MS);
    const at = input.now.toISOString();
    const steps: LedgerStatus[] = input.intent ? ["reserved", "signed", "submitted"] : ["reserved"];
    const history = steps.map((status): StatusEntry => ({ status, at }));
    const status = steps.at(-1) ?? "reserved";
    const authorization = input.intent ? (input.intent.authorization ?? null) : null;
    const [row] = (await this.query(RESERVE_SQL, [
      input.paymentId,
      input.wallet,
      input.scopeId,
      input.service,
      input.network,
      input.asset,
      input.payTo,
      input.amount.toString(),
      JSON.stringify(input.requirement ?? null),
      JSON.stringify(authorization),
      status,
      JSON.stringify(history),
      at,
      since.toISOString(),
      input.limits.perTransaction.toString(),
      input.limits.perRequest.toString(),
      input.limits.daily.toString(),
      input.caller ?? null,
    ])) as Record<"outcome" | keyof typeof SNAPSHOT_COLUMNS, string>[];
    if (!row) throw new Error("reserve_payment returned no row");
    if (row.outcome === "duplicate") throw new Error(`payment id ${input.paymentId} already exists`);
    const budget = snapshotOf(row);
    if (row.outcome !== "reserved") {
      const check = checkSpend(input.amount, input.limits, committedOf(budget));
      if (check.ok) throw new Error("reserve_payment refused an amount checkSpend allows");
      return { ...check, budget };
    }
    return {
      ok: true,
      budget,
      payment: {
        paymentId: input.paymentId,
        status,
        history,
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
        authorization,
        createdAt: input.now,
        updatedAt: input.now,
        settledAt: null,
        approval: null,
        caller: input.caller ?? null,
        expiresAt: null,
      },
    };
  }

  async recordAwaiting(input: AwaitInput): Promise<PaymentRecord> {
    if (input.amount < 0n) throw new RangeError("recordAwaiting: amount must not be negative");
    const [row] = await this.db
      .insert(payments)
      .values({
        paymentId: input.paymentId,
        status: "awaiting_approval",
        history: [{ status: "awaiting_approval", at: input.now.toISOString() }],
        wallet: input.wallet,
        scopeId: input.scopeId,
        service: input.service,
        network: input.network,
        asset: input.asset,
        payTo: input.payTo,
        amount: input.amount,
        requirement: input.requirement ?? null,
        approval: input.approval,
        caller: input.caller,
        expiresAt: input.expiresAt,
        createdAt: input.now,
        updatedAt: input.now,
      })
      .returning();
    if (!row) throw new Error("recordAwaiting: no row returned");
    return toRecord(row);
  }

  async approve(input: ApproveInput): Promise<ApproveResult> {
    const since = new Date(input.now.getTime() - DAILY_WINDOW_MS);
    const at = input.now.toISOString();
    const history = (["reserved", "signed", "submitted"] as const).map((status) => ({ status, at }));
    const [row] = (await this.query(APPROVE_SQL, [
      input.paymentId,
      JSON.stringify(input.authorization ?? null),
      JSON.stringify(history),
      at,
      since.toISOString(),
      input.limits.perTransaction.toString(),
      input.limits.perRequest.toString(),
      input.limits.daily.toString(),
    ])) as Record<"outcome" | "amount" | keyof typeof SNAPSHOT_COLUMNS, string>[];
    if (!row) throw new Error("approve_payment returned no row");
    if (row.outcome === "missing") return { ok: false, notAwaiting: "missing" };
    if (row.outcome.startsWith("status:")) {
      return { ok: false, notAwaiting: row.outcome.slice("status:".length) as LedgerStatus };
    }
    if (row.outcome === "refused") {
      const check = checkSpend(BigInt(row.amount), input.limits, committedOf(snapshotOf(row)));
      if (check.ok) throw new Error("approve_payment refused an amount checkSpend allows");
      return check;
    }
    const payment = await this.get(input.paymentId);
    if (!payment) throw new PaymentNotFoundError(input.paymentId);
    return { ok: true, payment };
  }

  /** The running totals (migration 6's `read_spend`): a day's buckets and the request's row. */
  private async readSpend(wallet: string, scopeId: string, now: Date) {
    const since = new Date(now.getTime() - DAILY_WINDOW_MS);
    const [row] = (await this.query(READ_SQL, [wallet, scopeId, since.toISOString()])) as Record<
      "day_pending" | "day_settled" | "day_unknown" | "request_pending" | "request_spent",
      string
    >[];
    if (!row) throw new Error("read_spend returned no row");
    return {
      dayPending: BigInt(row.day_pending),
      daySettled: BigInt(row.day_settled),
      dayUnknown: BigInt(row.day_unknown),
      requestPending: BigInt(row.request_pending),
      requestSpent: BigInt(row.request_spent),
    };
  }

  async budget(wallet: string, scopeId: string, now: Date): Promise<BudgetSnapshot> {
    const read = await this.readSpend(wallet, scopeId, now);
    return {
      daySpent: read.daySettled + read.dayUnknown,
      dayPending: read.dayPending,
      requestSpent: read.requestSpent,
      requestPending: read.requestPending,
    };
  }

  async transition(
    paymentId: string,
    to: LedgerStatus,
    fields: TransitionFields,
    now: Date,
    only?: LedgerStatus,
  ): Promise<void> {
    const entry: StatusEntry = { status: to, at: now.toISOString() };
    if (fields.txHash !== undefined) entry.txHash = fields.txHash;
    if (fields.payer !== undefined) entry.payer = fields.payer;
    if (fields.error !== undefined) entry.error = fields.error;
    if (only !== undefined) assertTransition(only, to);
    const from = LEDGER_STATUSES.filter((status) => canTransition(status, to) && (only ?? status) === status);
    const authorization = fields.authorization === undefined ? null : JSON.stringify(fields.authorization);

    // One call of `move_payment` (migrations/): the row lock, the state check (status IN allowed
    // sources) and the history append happen atomically, in one round trip. A concurrent step
    // re-evaluates the WHERE after waiting for the lock, so exactly one of two racing steps wins.
    for (let attempt = 0; attempt < 3; attempt++) {
      if (from.length > 0) {
        const [row] = await this.query(MOVE_SQL, [
          paymentId,
          to,
          textArray(from),
          JSON.stringify([entry]),
          fields.txHash ?? null,
          fields.payer ?? null,
          fields.error ?? null,
          authorization,
          now.toISOString(),
          !(to === "settled" && this.options.lazySettle === true),
        ]);
        if (row?.status) return;
      }
      // Not updated: say why. If the payment moved meanwhile into a state that allows the step, retry.
      const [current] = await this.db
        .select({ status: payments.status })
        .from(payments)
        .where(eq(payments.paymentId, paymentId));
      if (!current) throw new PaymentNotFoundError(paymentId);
      if (only !== undefined && current.status !== only) throw new IllegalTransitionError(current.status, to);
      assertTransition(current.status, to);
    }
    throw new Error(`payment ${paymentId} kept changing while moving it to ${to}`);
  }

  async get(paymentId: string): Promise<PaymentRecord | undefined> {
    const [row] = await this.db.select().from(payments).where(eq(payments.paymentId, paymentId));
    return row ? toRecord(row) : undefined;
  }

  async listByStatus(statuses: readonly LedgerStatus[]): Promise<PaymentRecord[]> {
    if (statuses.length === 0) return [];
    const rows = await this.db
      .select()
      .from(payments)
      .where(inArray(payments.status, [...statuses]))
      .orderBy(asc(payments.createdAt), asc(payments.paymentId));
    return rows.map(toRecord);
  }

  async listByScope(scopeId: string): Promise<PaymentRecord[]> {
    const rows = await this.db
      .select()
      .from(payments)
      .where(eq(payments.scopeId, scopeId))
      .orderBy(asc(payments.createdAt), asc(payments.paymentId));
    return rows.map(toRecord);
  }

  async spending(wallet: string, now: Date): Promise<SpendingSummary> {
    const {
      daySettled: settled,
      dayPending: pending,
      dayUnknown: unknown,
    } = await this.readSpend(wallet, "", now);
    return { settled, pending, unknown, today: settled + pending + unknown };
  }
}
