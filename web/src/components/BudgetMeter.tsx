import type { BudgetMeter as Budget, LimitMeter } from "../chat/types.js";
import { usd } from "../format.js";

/** Each limit's label; the per-payment one is a cap on each payment, not a balance spent down. */
const LIMITS = [
  ["perTransaction", "Per payment", "cap"],
  ["perRequest", "This request", "balance"],
  ["daily", "Last 24 h", "balance"],
] as const;

/** A cap reads as a cap ("Up to $1.00 per payment"); a balance as what is left of it. */
function figures(meter: LimitMeter, kind: "cap" | "balance"): string {
  if (kind === "cap") return `Up to ${usd(meter.limit.usd)} per payment`;
  const after = meter.remainingAfter ? ` · ${usd(meter.remainingAfter.usd)} after this` : "";
  return `${usd(meter.remaining.usd)} left of ${usd(meter.limit.usd)}${after}`;
}

/** Percent of `limit` that `part` is, clamped to 0..100, from atomic units (no floats until here). */
function percent(part: bigint, limit: bigint): number {
  if (limit <= 0n || part <= 0n) return 0;
  if (part >= limit) return 100;
  return Number((part * 10_000n) / limit) / 100;
}

interface MeterProps {
  label: string;
  kind: "cap" | "balance";
  meter: LimitMeter;
}

function Meter({ label, kind, meter }: MeterProps) {
  const limit = BigInt(meter.limit.atomic);
  const spent = BigInt(meter.spent.atomic);
  const pending = BigInt(meter.pending.atomic);
  const remaining = BigInt(meter.remaining.atomic);
  const after = meter.remainingAfter ? BigInt(meter.remainingAfter.atomic) : undefined;
  const thisPayment = after !== undefined && remaining > after ? remaining - after : 0n;
  const spentPct = percent(spent, limit);
  const pendingPct = Math.min(percent(pending, limit), 100 - spentPct);
  const thisPct = Math.min(percent(thisPayment, limit), 100 - spentPct - pendingPct);
  return (
    <div className="meter" data-limit={label}>
      <div className="meter-head">
        <span>{label}</span>
        <span className="meter-figures">{figures(meter, kind)}</span>
      </div>
      <div className="meter-bar" aria-hidden="true">
        <span className="meter-spent" style={{ width: `${spentPct}%` }} />
        <span className="meter-pending" style={{ width: `${pendingPct}%` }} />
        <span className="meter-this" style={{ width: `${thisPct}%` }} />
      </div>
      {spent > 0n || pending > 0n ? (
        <div className="meter-detail">
          {usd(meter.spent.usd)} spent{pending > 0n ? ` · ${usd(meter.pending.usd)} pending` : ""}
        </div>
      ) : null}
    </div>
  );
}

/** Atomic USD (6 decimals) as dollars, at least two decimals: 30000n -> "0.03". */
function usdOf(atomic: bigint): string {
  const cents = (atomic % 1_000_000n)
    .toString()
    .padStart(6, "0")
    .replace(/0{1,4}$/, "");
  return `${atomic / 1_000_000n}.${cents.padEnd(2, "0")}`;
}

/** An open tab as a balance: what it was funded with, what its committed payments left. */
function tabAsMeter(tab: NonNullable<Budget["tab"]>): LimitMeter {
  const spent = BigInt(tab.amount.atomic) - BigInt(tab.left.atomic);
  const zero = { atomic: "0", usd: "0.00" };
  const spentMoney = spent > 0n ? { atomic: spent.toString(), usd: usdOf(spent) } : zero;
  return { limit: tab.amount, spent: spentMoney, pending: zero, remaining: tab.left };
}

/** Without what a payment that will not happen would have left ("after this"). */
function withoutAfter(meter: LimitMeter): LimitMeter {
  const { remainingAfter: _after, ...rest } = meter;
  return rest;
}

/**
 * The live budget a `p:` update carries, drawn as it is: one bar per limit. `final`: the payment
 * will not be made (its approval expired), so nothing is shown "after this". `past`: the payment
 * has ended, and the figures are those of its time (later payments are not in them): said so.
 */
export function BudgetMeter({
  budget,
  final = false,
  past = false,
}: {
  budget: Budget;
  final?: boolean;
  past?: boolean;
}) {
  return (
    <div className="budget">
      {past ? (
        <p className="meter-asof muted small" data-testid="meter-asof">
          As it stood at this payment
        </p>
      ) : null}
      {LIMITS.map(([key, label, kind]) => (
        <Meter key={key} label={label} kind={kind} meter={final ? withoutAfter(budget[key]) : budget[key]} />
      ))}
      {budget.tab ? <Meter label="Your tab" kind="balance" meter={tabAsMeter(budget.tab)} /> : null}
    </div>
  );
}
