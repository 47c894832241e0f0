import {
  type ApproveInput,
  type BudgetSnapshot,
  DAILY_WINDOW_MS,
  type ReserveInput,
  type StatusEntry,
  type TransitionFields,
} from "../payments/ports/index.js";
import type { LedgerStatus } from "../payments/rules/index.js";
import { INTENT_STEPS } from "../protocol/index.js";
import { jsonb, storableText } from "./storable.js";

/**
 * The ledger's calls of its database functions (migration 11's `reserve_payment` and
 * `approve_payment` with a caller's cap, migration 6's `read_spend` and `move_payment`, migration
 * 11's `read_caller_spend`, src/store/migrations/), made with the
 * driver's own query: they are on every payment's critical path. What counts and how the day is
 * cut lives in the migration's triggers and `read_spend`; what an answer means is the ledger's
 * (ledger.ts).
 */

/**
 * The driver's own query (`$1` parameters, rows as objects), for the two calls on every payment's
 * critical path: it skips Drizzle's query building, about 0.2 ms a call on PGlite
 * (docs/benchmarks.md). Everything else goes through Drizzle.
 */
export type DriverQuery = (text: string, params: readonly unknown[]) => Promise<Record<string, unknown>[]>;

/** The budget sums a query returns as text (exact), by the snapshot field they fill. */
const SNAPSHOT_COLUMNS = {
  day_spent: "daySpent",
  day_pending: "dayPending",
  request_spent: "requestSpent",
  request_pending: "requestPending",
} as const;

type SnapshotRow = Record<keyof typeof SNAPSHOT_COLUMNS, string> & {
  /** The caller's sums, NULL when no caller cap applied. */
  caller_spent?: string | null;
  caller_pending?: string | null;
};

function snapshotOf(row: Partial<SnapshotRow>): BudgetSnapshot {
  const snapshot: BudgetSnapshot = { daySpent: 0n, dayPending: 0n, requestSpent: 0n, requestPending: 0n };
  for (const [column, field] of Object.entries(SNAPSHOT_COLUMNS)) {
    snapshot[field] = BigInt(row[column as keyof typeof SNAPSHOT_COLUMNS] ?? "0");
  }
  if (row.caller_spent != null) snapshot.callerSpent = BigInt(row.caller_spent);
  if (row.caller_pending != null) snapshot.callerPending = BigInt(row.caller_pending);
  return snapshot;
}

/**
 * The reservation's statement: `reserve_payment` of migration 11, on the running totals, recording
 * the caller and checking its cap (NULL: none).
 */
const RESERVE_SQL = `select outcome, day_spent, day_pending, request_spent, request_pending,
    caller_spent, caller_pending
  from reserve_payment($1, $2, $3, $4, $5, $6, $7, $8::numeric, $9::jsonb, $10::jsonb, $11,
    $12::jsonb, $13::timestamptz, $14::timestamptz, $15::numeric, $16::numeric, $17::numeric,
    $18::text, $19::numeric)`;

/** From a tab: `reserve_tab_payment` of migration 13 (the tab's lock, then the reservation above). */
const RESERVE_TAB_SQL = `select outcome, day_spent, day_pending, request_spent, request_pending,
    caller_spent, caller_pending, tab_left
  from reserve_tab_payment($20, $21::timestamptz, $1, $2, $3, $4, $5, $6, $7, $8::numeric,
    $9::jsonb, $10::jsonb, $11, $12::jsonb, $13::timestamptz, $14::timestamptz, $15::numeric,
    $16::numeric, $17::numeric, $18::text, $19::numeric)`;

/** Approving: `approve_payment` of migration 11 (the row's caller, its cap). */
const APPROVE_SQL = `select outcome, amount, day_spent, day_pending, request_spent, request_pending,
    caller_spent, caller_pending
  from approve_payment($1, $2::jsonb, $3::jsonb, $4::timestamptz, $5::timestamptz, $6::numeric,
    $7::numeric, $8::numeric, $9::numeric)`;

/** The running totals of a wallet's day and a request (migration 6), as exact text. */
const READ_SQL = `select day_pending::text, day_settled::text, day_unknown::text,
  request_pending::text, request_spent::text from read_spend($1, $2, $3::timestamptz)`;

/** The same, and a caller's day over every wallet (migration 11), in one round trip. */
const READ_WITH_CALLER_SQL = `select s.day_pending::text, s.day_settled::text, s.day_unknown::text,
  s.request_pending::text, s.request_spent::text, c.pending::text as caller_pending,
  (c.settled + c.unknown)::text as caller_spent
  from read_spend($1, $2, $3::timestamptz) s, read_caller_spend($4, $3::timestamptz) c`;

/** A caller cap as the functions take it (NULL: none). */
const capOf = (cap: bigint | undefined) => (cap === undefined ? null : cap.toString());

/**
 * A status move: `move_payment` of migration 6 (migration 4's, and whether the commit waits for
 * the log flush: every move does but `settled`, see migration 6).
 */
const MOVE_SQL = `select move_payment($1, $2, $3::text[], $4::jsonb, $5, $6, $7, $8::jsonb,
  $9::timestamptz, $10::boolean) as status`;

/** A Postgres array literal of plain words (statuses). */
const textArray = (words: readonly string[]) => `{${words.join(",")}}`;

/** The start of the daily limit's window ending at `now`. */
const dayBefore = (now: Date) => new Date(now.getTime() - DAILY_WINDOW_MS).toISOString();

/** What the new row starts as: reserved, or submitted with its intent. */
export interface ReservedRow {
  status: LedgerStatus;
  history: StatusEntry[];
  authorization: unknown;
}

const TAKEN_SQL = "select 1 from payments where payment_id = $1";

/** `reserve_payment`'s answer (`reserved`, `refused` or `duplicate`) and the sums it read. */
export async function callReserve(
  query: DriverQuery,
  input: ReserveInput,
  row: ReservedRow,
): Promise<{ outcome: string; budget: BudgetSnapshot; tabLeft?: bigint }> {
  const tab = input.tab ? [input.tab.tabId, input.tab.until.toISOString()] : [];
  const [answer] = (await query(input.tab ? RESERVE_TAB_SQL : RESERVE_SQL, [
    input.paymentId,
    input.wallet,
    input.scopeId,
    input.service,
    input.network,
    input.asset,
    input.payTo,
    input.amount.toString(),
    jsonb(input.requirement ?? null),
    jsonb(row.authorization),
    row.status,
    jsonb(row.history),
    input.now.toISOString(),
    dayBefore(input.now),
    input.limits.perTransaction.toString(),
    input.limits.perRequest.toString(),
    input.limits.daily.toString(),
    input.caller ?? null,
    capOf(input.limits.callerDaily),
    ...tab,
  ])) as (SnapshotRow & { outcome: string; tab_left?: string })[];
  if (!answer) throw new Error("reserve_payment returned no row");
  const tabLeft = answer.tab_left != null ? { tabLeft: BigInt(answer.tab_left) } : {};
  // The function weighs the limits before it meets the payment's id: a second call for one quote id
  // that waited on the first one's lock hears the limits that payment filled. Its id is taken.
  const taken = answer.outcome === "refused" && (await query(TAKEN_SQL, [input.paymentId])).length > 0;
  return { outcome: taken ? "duplicate" : answer.outcome, budget: snapshotOf(answer), ...tabLeft };
}

/** The unique index of migration 17: one signed Solana transaction, one payment. */
export const SAME_TRANSACTION_INDEX = "payments_svm_message_idx";

/** Whether a driver error (or a cause of it) is a reservation refused by that index. */
export function holdsSameTransaction(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 8; e = e.cause, depth++) {
    const { code } = e as { code?: unknown };
    if (code === "23505" && e.message.includes(SAME_TRANSACTION_INDEX)) return true;
  }
  return false;
}

/**
 * `approve_payment`'s answer (`reserved`, `refused`, `missing` or `status:<status>`), the
 * payment's amount (text, exact) and the sums it read.
 */
export async function callApprove(
  query: DriverQuery,
  input: ApproveInput,
): Promise<{ outcome: string; amount: string; budget: BudgetSnapshot }> {
  const at = input.now.toISOString();
  const history = INTENT_STEPS.map((status) => ({ status, at }));
  const [answer] = (await query(APPROVE_SQL, [
    input.paymentId,
    jsonb(input.authorization ?? null),
    jsonb(history),
    at,
    dayBefore(input.now),
    input.limits.perTransaction.toString(),
    input.limits.perRequest.toString(),
    input.limits.daily.toString(),
    capOf(input.limits.callerDaily),
  ])) as (SnapshotRow & { outcome: string; amount: string })[];
  if (!answer) throw new Error("approve_payment returned no row");
  return { outcome: answer.outcome, amount: answer.amount, budget: snapshotOf(answer) };
}

/**
 * The running totals (migration 6's `read_spend`): a day's buckets and the request's row; with a
 * caller, its day over every wallet too (migration 11's `read_caller_spend`).
 */
export async function readSpend(
  query: DriverQuery,
  wallet: string,
  scopeId: string,
  now: Date,
  caller?: string,
) {
  const since = dayBefore(now);
  const [row] = (await (caller === undefined
    ? query(READ_SQL, [wallet, scopeId, since])
    : query(READ_WITH_CALLER_SQL, [wallet, scopeId, since, caller]))) as (Record<
    "day_pending" | "day_settled" | "day_unknown" | "request_pending" | "request_spent",
    string
  > &
    Partial<Record<"caller_pending" | "caller_spent", string>>)[];
  if (!row) throw new Error("read_spend returned no row");
  return {
    dayPending: BigInt(row.day_pending),
    daySettled: BigInt(row.day_settled),
    dayUnknown: BigInt(row.day_unknown),
    requestPending: BigInt(row.request_pending),
    requestSpent: BigInt(row.request_spent),
    ...(row.caller_pending !== undefined && row.caller_spent !== undefined
      ? { callerPending: BigInt(row.caller_pending), callerSpent: BigInt(row.caller_spent) }
      : {}),
  };
}

/** One status move, if the row is in one of `from`. */
export interface Move {
  paymentId: string;
  to: LedgerStatus;
  from: readonly LedgerStatus[];
  entry: StatusEntry;
  fields: TransitionFields;
  now: Date;
  /** Whether the commit waits for the log flush. */
  flush: boolean;
}

/**
 * One call of `move_payment`: the row lock, the state check (status IN allowed sources) and the
 * history append happen atomically, in one round trip. A concurrent step re-evaluates the WHERE
 * after waiting for the lock, so exactly one of two racing steps wins. False: no row moved.
 */
export async function callMove(query: DriverQuery, move: Move): Promise<boolean> {
  const { fields } = move;
  const [row] = await query(MOVE_SQL, [
    move.paymentId,
    move.to,
    textArray(move.from),
    jsonb([move.entry]),
    storableText(fields.txHash ?? null),
    storableText(fields.payer ?? null),
    storableText(fields.error ?? null),
    fields.authorization === undefined ? null : jsonb(fields.authorization),
    move.now.toISOString(),
    move.flush,
  ]);
  return Boolean(row?.status);
}
