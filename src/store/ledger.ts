import { asc, eq, inArray } from "drizzle-orm";
import {
  type ApproveInput,
  type ApproveResult,
  type AwaitInput,
  type BudgetSnapshot,
  DuplicatePaymentError,
  type Ledger,
  type LedgerReads,
  PaymentNotFoundError,
  type PaymentRecord,
  type ReserveInput,
  type ReserveResult,
  SameTransactionError,
  type SpendingSummary,
  type StatusEntry,
  type TabRefusal,
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
import { INTENT_STEPS } from "../protocol/index.js";
import {
  callApprove,
  callMove,
  callReserve,
  type DriverQuery,
  holdsSameTransaction,
  type ReservedRow,
  readSpend,
} from "./ledger-calls.js";
import type { Db } from "./migrate.js";
import { payments } from "./schema.js";
import { storable } from "./storable.js";

/**
 * The Ledger on PostgreSQL through Drizzle. Works the same on PGlite and on a server: every
 * decision that must hold under concurrency is taken inside a transaction holding a row lock (the
 * database functions it calls for them: ledger-calls.ts).
 */

type PaymentRow = typeof payments.$inferSelect;

function toRecord(row: PaymentRow): PaymentRecord {
  return { ...row, authorization: row.authorization ?? null, approval: row.approval ?? null };
}

/** The row `reserve_payment` inserted, as `get` would read it back. */
function reservedRecord(input: ReserveInput, row: ReservedRow): PaymentRecord {
  return {
    paymentId: input.paymentId,
    status: row.status,
    history: row.history,
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
    authorization: row.authorization,
    createdAt: input.now,
    updatedAt: input.now,
    settledAt: null,
    approval: null,
    caller: input.caller ?? null,
    expiresAt: null,
  };
}

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
   * row (and, with a caller cap, the caller's), sum what counts as spent, insert the row if the
   * amount fits. A refusal is explained by
   * checkSpend on the sums the function read, so the message and the decision agree.
   */
  async reserve(input: ReserveInput): Promise<ReserveResult> {
    if (input.amount < 0n) throw new RangeError("reserve: amount must not be negative");
    const at = input.now.toISOString();
    const steps: LedgerStatus[] = input.intent ? [...INTENT_STEPS] : ["reserved"];
    const row: ReservedRow = {
      status: steps.at(-1) ?? "reserved",
      history: steps.map((status): StatusEntry => ({ status, at })),
      authorization: input.intent ? (input.intent.authorization ?? null) : null,
    };
    const { outcome, budget, tabLeft } = await callReserve(this.query, input, row).catch((error: unknown) => {
      // Migration 17's index: another payment holds this very signed transaction (no cause kept:
      // the driver's error quotes the row).
      if (holdsSameTransaction(error)) throw new SameTransactionError(input.paymentId);
      throw error;
    });
    if (outcome === "duplicate") throw new DuplicatePaymentError(input.paymentId);
    if (outcome.startsWith("tab:")) {
      const tab = outcome.slice("tab:".length) as TabRefusal["tab"];
      return { ok: false, tab, tabLeftAtomic: tabLeft ?? 0n, budget };
    }
    if (outcome !== "reserved") {
      const check = checkSpend(input.amount, input.limits, committedOf(budget));
      if (check.ok) throw new Error("reserve_payment refused an amount checkSpend allows");
      return { ...check, budget };
    }
    const record = reservedRecord(input, row);
    if (input.tab) record.tabId = input.tab.tabId;
    return {
      ok: true,
      budget,
      payment: record,
      ...(tabLeft !== undefined ? { tabLeftAtomic: tabLeft } : {}),
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
        requirement: storable(input.requirement ?? null),
        approval: storable(input.approval),
        caller: input.caller,
        expiresAt: input.expiresAt,
        createdAt: input.now,
        updatedAt: input.now,
      })
      .onConflictDoNothing({ target: payments.paymentId })
      .returning();
    if (!row) throw new DuplicatePaymentError(input.paymentId);
    return toRecord(row);
  }

  async approve(input: ApproveInput): Promise<ApproveResult> {
    const { outcome, amount, budget } = await callApprove(this.query, input).catch((error: unknown) => {
      if (holdsSameTransaction(error)) throw new SameTransactionError(input.paymentId);
      throw error;
    });
    if (outcome === "missing") return { ok: false, notAwaiting: "missing" };
    if (outcome.startsWith("status:")) {
      return { ok: false, notAwaiting: outcome.slice("status:".length) as LedgerStatus };
    }
    if (outcome === "refused") {
      const check = checkSpend(BigInt(amount), input.limits, committedOf(budget));
      if (check.ok) throw new Error("approve_payment refused an amount checkSpend allows");
      return check;
    }
    const payment = await this.get(input.paymentId);
    if (!payment) throw new PaymentNotFoundError(input.paymentId);
    return { ok: true, payment };
  }

  async budget(wallet: string, scopeId: string, now: Date, caller?: string): Promise<BudgetSnapshot> {
    const read = await readSpend(this.query, wallet, scopeId, now, caller);
    return {
      daySpent: read.daySettled + read.dayUnknown,
      dayPending: read.dayPending,
      requestSpent: read.requestSpent,
      requestPending: read.requestPending,
      ...(read.callerSpent !== undefined
        ? { callerSpent: read.callerSpent, callerPending: read.callerPending ?? 0n }
        : {}),
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
    const flush = !(to === "settled" && this.options.lazySettle === true);
    const move = { paymentId, to, from, entry, fields, now, flush };
    for (let attempt = 0; attempt < 3; attempt++) {
      if (from.length > 0 && (await callMove(this.query, move))) return;
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
    } = await readSpend(this.query, wallet, "", now);
    return { settled, pending, unknown, today: settled + pending + unknown };
  }
}
