import { DAILY_WINDOW_MS, DAILY_WINDOW_SLACK_MS } from "../../payments/ports/index.js";
import { isCommitted, type LedgerStatus } from "../../payments/rules/index.js";

/**
 * Running spend totals, as migration 6 keeps them on PostgreSQL (docs/payments.md, "Running
 * totals"): per wallet, one row per 5-minute bucket of a payment's creation time; per request, one
 * row. A read sums the wallet's buckets that reach into the day (the bucket straddling its edge
 * counts whole) and the request's row, so its cost does not grow with the payments.
 */

/** How a status counts: `reserved`, `signed`, `submitted` pending; `settled`, `unknown` spent. */
type Kind = "pending" | "settled" | "unknown";

function kindOf(status: LedgerStatus): Kind | undefined {
  if (!isCommitted(status)) return undefined;
  return status === "settled" || status === "unknown" ? status : "pending";
}

type Sums = Record<Kind, bigint>;
const zero = (): Sums => ({ pending: 0n, settled: 0n, unknown: 0n });

/** `spend_bucket`: the start of the 5-minute bin of `at` (bins aligned on 2000-01-01, as on the epoch). */
function bucketOf(at: Date): number {
  const ms = at.getTime();
  return ms - (((ms % DAILY_WINDOW_SLACK_MS) + DAILY_WINDOW_SLACK_MS) % DAILY_WINDOW_SLACK_MS);
}

/** What a row contributes to the totals. */
export interface Counted {
  wallet: string;
  scopeId: string;
  createdAt: Date;
  status: LedgerStatus;
  amount: bigint;
  caller: string | null;
}

/** `read_spend`: a wallet's day and a request's totals. */
export interface SpendRead {
  dayPending: bigint;
  daySettled: bigint;
  dayUnknown: bigint;
  requestPending: bigint;
  requestSpent: bigint;
}

/** `read_caller_spend` (migration 11): a caller's day over every wallet. */
export interface CallerRead {
  callerSpent: bigint;
  callerPending: bigint;
}

export class SpendTotals {
  private readonly buckets = new Map<string, Map<number, Sums>>();
  private readonly requests = new Map<string, Sums>();
  /** Per caller, as migration 11 keeps them. */
  private readonly callers = new Map<string, Map<number, Sums>>();

  /** The triggers of migrations 6 and 11: take away what the row counted before, add what it counts now. */
  move(before: Counted | undefined, after: Counted | undefined): void {
    if (before) this.add(before, -1n);
    if (after) this.add(after, 1n);
  }

  read(wallet: string, scopeId: string, now: Date): SpendRead {
    const day = dayOf(this.buckets.get(wallet), now);
    const request = this.requests.get(scopeId) ?? zero();
    return {
      dayPending: day.pending,
      daySettled: day.settled,
      dayUnknown: day.unknown,
      requestPending: request.pending,
      requestSpent: request.settled + request.unknown,
    };
  }

  readCaller(caller: string, now: Date): CallerRead {
    const day = dayOf(this.callers.get(caller), now);
    return { callerSpent: day.settled + day.unknown, callerPending: day.pending };
  }

  private add(row: Counted, sign: bigint): void {
    const kind = kindOf(row.status);
    if (!kind || row.amount === 0n) return;
    const bucket = bucketOf(row.createdAt);
    addTo(this.buckets, row.wallet, bucket, kind, sign * row.amount);
    if (row.caller !== null) addTo(this.callers, row.caller, bucket, kind, sign * row.amount);
    const request = this.requests.get(row.scopeId) ?? zero();
    request[kind] += sign * row.amount;
    this.requests.set(row.scopeId, request);
  }
}

/** Every bucket that reaches past the day's start (`bucket > since - 5 minutes`), summed. */
function dayOf(buckets: Map<number, Sums> | undefined, now: Date): Sums {
  const edge = now.getTime() - DAILY_WINDOW_MS - DAILY_WINDOW_SLACK_MS;
  const day = zero();
  for (const [bucket, sums] of buckets ?? []) {
    if (bucket <= edge) continue;
    day.pending += sums.pending;
    day.settled += sums.settled;
    day.unknown += sums.unknown;
  }
  return day;
}

function addTo(
  totals: Map<string, Map<number, Sums>>,
  key: string,
  bucket: number,
  kind: Kind,
  amount: bigint,
) {
  let buckets = totals.get(key);
  if (!buckets) {
    buckets = new Map();
    totals.set(key, buckets);
  }
  const sums = buckets.get(bucket) ?? zero();
  sums[kind] += amount;
  buckets.set(bucket, sums);
}
