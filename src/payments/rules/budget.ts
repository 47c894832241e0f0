import { formatUsd } from "../../money/index.js";
import {
  type BudgetMeter,
  type LimitMeter,
  type Money,
  PAYMENT_STATUS,
  type PaymentStatus,
} from "../../protocol/index.js";
import { type Committed, dailyOf, type SpendLimits } from "./limits.js";

/**
 * A wallet's spending in the rolling 24 h and one request's, split into spent and pending; and the
 * caller's over all its wallets, when its key's daily cap was read with them.
 */
export interface BudgetSnapshot {
  /** settled + unknown (gone, or possibly gone). */
  daySpent: bigint;
  /** reserved + signed + submitted. */
  dayPending: bigint;
  requestSpent: bigint;
  requestPending: bigint;
  /** The caller's settled + unknown in the rolling 24 h, every wallet (read with a caller cap only). */
  callerSpent?: bigint;
  /** The caller's reserved + signed + submitted in the rolling 24 h, every wallet. */
  callerPending?: bigint;
}

/**
 * The live budget meter every `p:` update carries (docs/protocol.md, "Budget meter"): each limit's
 * amount, what counts as spent (settled, or unclear and possibly gone), what is pending (reserved,
 * signed, submitted), what remains, and while a payment is only quoted or awaits approval, what
 * would remain after it. Pure: the ledger's snapshot (read once, before this payment had a row)
 * plus this payment's own amount where its status puts it. Clients draw it as it is.
 */
export interface BudgetBase {
  /** The amount limits, and the approval threshold when one is set (shown on the meter). */
  limits: SpendLimits & { approvalAbove?: bigint | undefined };
  snapshot: BudgetSnapshot;
}

/** Not yet holding budget and not over: the meter shows what would remain after paying it. */
const before = (status: PaymentStatus): boolean =>
  PAYMENT_STATUS[status].budget === "none" && !PAYMENT_STATUS[status].final;

const money = (atomic: bigint): Money => ({ atomic: atomic.toString(), usd: formatUsd(atomic) });
const atLeastZero = (value: bigint): bigint => (value < 0n ? 0n : value);

function meter(limit: bigint, spent: bigint, pending: bigint, after: bigint | undefined): LimitMeter {
  const remaining = atLeastZero(limit - spent - pending);
  return {
    limit: money(limit),
    spent: money(spent),
    pending: money(pending),
    remaining: money(remaining),
    ...(after !== undefined ? { remainingAfter: money(atLeastZero(remaining - after)) } : {}),
  };
}

/** The meter as it stands when this payment (of `amount`) is in `status`. */
export function budgetMeter(base: BudgetBase, amount: bigint, status: PaymentStatus): BudgetMeter {
  const { limits, snapshot } = base;
  const ownPending = PAYMENT_STATUS[status].budget === "pending" ? amount : 0n;
  const ownSpent = PAYMENT_STATUS[status].budget === "spent" ? amount : 0n;
  const after = before(status) ? amount : undefined;
  return {
    perTransaction: {
      limit: money(limits.perTransaction),
      spent: money(0n),
      pending: money(0n),
      remaining: money(atLeastZero(limits.perTransaction)),
      ...(after !== undefined ? { remainingAfter: money(atLeastZero(limits.perTransaction - after)) } : {}),
    },
    perRequest: meter(
      limits.perRequest,
      snapshot.requestSpent + ownSpent,
      snapshot.requestPending + ownPending,
      after,
    ),
    // The daily limit that binds: the wallet's, or the key's over all its wallets when less remains.
    daily: dailyOf(limits, committedOf(snapshot)).byCaller
      ? meter(
          limits.callerDaily ?? 0n,
          (snapshot.callerSpent ?? 0n) + ownSpent,
          (snapshot.callerPending ?? 0n) + ownPending,
          after,
        )
      : meter(limits.daily, snapshot.daySpent + ownSpent, snapshot.dayPending + ownPending, after),
    ...(limits.approvalAbove !== undefined ? { approvalAbove: money(limits.approvalAbove) } : {}),
  };
}

/** What counts against the limits in a snapshot: everything committed (spent or pending). */
export function committedOf(snapshot: BudgetSnapshot): Committed {
  const caller =
    snapshot.callerSpent === undefined && snapshot.callerPending === undefined
      ? {}
      : { callerToday: (snapshot.callerSpent ?? 0n) + (snapshot.callerPending ?? 0n) };
  return {
    today: snapshot.daySpent + snapshot.dayPending,
    thisRequest: snapshot.requestSpent + snapshot.requestPending,
    ...caller,
  };
}
