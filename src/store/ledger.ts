import { and, asc, eq, gt, inArray, sql } from "drizzle-orm";
import {
  DAILY_WINDOW_MS,
  IDEMPOTENCY_TTL_MS,
  type IdempotencyClaim,
  type IdempotencyState,
  type Ledger,
  PaymentNotFoundError,
  type PaymentRecord,
  type ReserveInput,
  type ReserveResult,
  type SpendingSummary,
  type StatusEntry,
  type TransitionFields,
} from "../payments/ledger.js";
import { checkSpend } from "../payments/policy.js";
import { assertTransition, type LedgerStatus, SPENT_STATUSES } from "../payments/state.js";
import type { Db } from "./migrations.js";
import { idempotencyKeys, payments, walletBudgets } from "./schema.js";

/**
 * The Ledger on PostgreSQL through Drizzle. Works the same on PGlite and on a server: every
 * decision that must hold under concurrency is taken inside a transaction holding a row lock.
 */

type PaymentRow = typeof payments.$inferSelect;

const PENDING: readonly LedgerStatus[] = ["reserved", "signed", "submitted"];

function toRecord(row: PaymentRow): PaymentRecord {
  return { ...row, authorization: row.authorization ?? null };
}

/** Sum of `amount` as exact text, so the total never passes through a JS number. */
const sumAmount = sql<string>`coalesce(sum(${payments.amount}), 0)::text`;

export class PgLedger implements Ledger {
  constructor(private readonly db: Db) {}

  async reserve(input: ReserveInput): Promise<ReserveResult> {
    if (input.amount < 0n) throw new RangeError("reserve: amount must not be negative");
    const since = new Date(input.now.getTime() - DAILY_WINDOW_MS);
    return this.db.transaction(async (tx) => {
      // The wallet's budget row is the lock every reservation for this wallet queues on.
      await tx
        .insert(walletBudgets)
        .values({ wallet: input.wallet, createdAt: input.now })
        .onConflictDoNothing({ target: walletBudgets.wallet });
      await tx
        .select({ wallet: walletBudgets.wallet })
        .from(walletBudgets)
        .where(eq(walletBudgets.wallet, input.wallet))
        .for("update");

      const counts = inArray(payments.status, [...SPENT_STATUSES]);
      const [today] = await tx
        .select({ total: sumAmount })
        .from(payments)
        .where(and(eq(payments.wallet, input.wallet), gt(payments.createdAt, since), counts));
      const [thisRequest] = await tx
        .select({ total: sumAmount })
        .from(payments)
        .where(and(eq(payments.requestId, input.requestId), counts));

      const check = checkSpend(input.amount, input.limits, {
        today: BigInt(today?.total ?? "0"),
        thisRequest: BigInt(thisRequest?.total ?? "0"),
      });
      if (!check.ok) return check;

      const entry: StatusEntry = { status: "reserved", at: input.now.toISOString() };
      const [row] = await tx
        .insert(payments)
        .values({
          paymentId: input.paymentId,
          status: "reserved",
          history: [entry],
          wallet: input.wallet,
          requestId: input.requestId,
          service: input.service,
          network: input.network,
          asset: input.asset,
          payTo: input.payTo,
          amount: input.amount,
          requirement: input.requirement ?? null,
          createdAt: input.now,
          updatedAt: input.now,
        })
        .onConflictDoNothing({ target: payments.paymentId })
        .returning();
      if (!row) throw new Error(`payment id ${input.paymentId} already exists`);
      return { ok: true as const, payment: toRecord(row) };
    });
  }

  async transition(
    paymentId: string,
    to: LedgerStatus,
    fields: TransitionFields,
    now: Date,
  ): Promise<PaymentRecord> {
    return this.db.transaction(async (tx) => {
      const [current] = await tx
        .select()
        .from(payments)
        .where(eq(payments.paymentId, paymentId))
        .for("update");
      if (!current) throw new PaymentNotFoundError(paymentId);
      assertTransition(current.status, to);

      const entry: StatusEntry = { status: to, at: now.toISOString() };
      if (fields.txHash !== undefined) entry.txHash = fields.txHash;
      if (fields.payer !== undefined) entry.payer = fields.payer;
      if (fields.error !== undefined) entry.error = fields.error;

      const [row] = await tx
        .update(payments)
        .set({
          status: to,
          history: [...current.history, entry],
          txHash: fields.txHash ?? current.txHash,
          payer: fields.payer ?? current.payer,
          error: fields.error ?? current.error,
          authorization: fields.authorization !== undefined ? fields.authorization : current.authorization,
          updatedAt: now,
          settledAt: to === "settled" ? now : current.settledAt,
        })
        .where(eq(payments.paymentId, paymentId))
        .returning();
      if (!row) throw new PaymentNotFoundError(paymentId);
      return toRecord(row);
    });
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

  async listByRequest(requestId: string): Promise<PaymentRecord[]> {
    const rows = await this.db
      .select()
      .from(payments)
      .where(eq(payments.requestId, requestId))
      .orderBy(asc(payments.createdAt), asc(payments.paymentId));
    return rows.map(toRecord);
  }

  async spending(wallet: string, now: Date): Promise<SpendingSummary> {
    const since = new Date(now.getTime() - DAILY_WINDOW_MS);
    const rows = await this.db
      .select({ status: payments.status, total: sumAmount })
      .from(payments)
      .where(
        and(
          eq(payments.wallet, wallet),
          gt(payments.createdAt, since),
          inArray(payments.status, [...SPENT_STATUSES]),
        ),
      )
      .groupBy(payments.status);
    const summary: SpendingSummary = { settled: 0n, pending: 0n, unknown: 0n, today: 0n };
    for (const { status, total } of rows) {
      const amount = BigInt(total);
      if (status === "settled") summary.settled += amount;
      else if (status === "unknown") summary.unknown += amount;
      else if (PENDING.includes(status)) summary.pending += amount;
      summary.today += amount;
    }
    return summary;
  }

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
