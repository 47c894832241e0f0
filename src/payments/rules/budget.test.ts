import { describe, expect, it } from "vitest";
import { PAYMENT_STATUSES, type PaymentStatus } from "../../protocol/index.js";
import { type BudgetBase, budgetMeter, committedOf, isCommitted } from "./index.js";

/** The budget meter every `p:` update carries (pure): where this payment's amount sits, per status. */

const USD = 1_000_000n;
const base: BudgetBase = {
  limits: { perTransaction: 2n * USD, perRequest: 5n * USD, daily: 10n * USD },
  snapshot: { daySpent: 3n * USD, dayPending: USD, requestSpent: USD, requestPending: USD },
};
const amount = USD / 2n;

/** Where the payment's own amount goes in each status: pending, spent, or (before a reservation) "after". */
const PLACE: Record<PaymentStatus, "pending" | "spent" | "after" | "none"> = {
  quoted: "after",
  awaiting_approval: "after",
  reserved: "pending",
  signed: "pending",
  submitted: "pending",
  settled: "spent",
  unknown: "spent",
  failed: "none",
  released: "none",
  refused: "none",
  rejected: "none",
  expired: "none",
};

describe("budget meter", () => {
  it.each(PAYMENT_STATUSES.map((s) => [s, PLACE[s]] as const))("%s: its amount is %s", (status, place) => {
    const meter = budgetMeter(base, amount, status);
    const own = (where: typeof place) => (place === where ? amount : 0n);
    expect(meter.daily.spent.atomic).toBe((3n * USD + own("spent")).toString());
    expect(meter.daily.pending.atomic).toBe((USD + own("pending")).toString());
    expect(meter.daily.remaining.atomic).toBe((6n * USD - own("spent") - own("pending")).toString());
    expect(meter.perRequest.spent.atomic).toBe((USD + own("spent")).toString());
    expect(meter.perRequest.pending.atomic).toBe((USD + own("pending")).toString());
    expect(meter.perRequest.remaining.atomic).toBe((3n * USD - own("spent") - own("pending")).toString());
    expect(meter.daily.remainingAfter?.atomic).toBe(
      place === "after" ? (6n * USD - amount).toString() : undefined,
    );
    expect(meter.perTransaction.remaining.atomic).toBe((2n * USD).toString());
    // The meter counts a payment exactly where the ledger's limits do.
    expect(place === "spent" || place === "pending").toBe(status !== "quoted" && isCommitted(status));
  });

  it("shows the approval threshold when one is set, and nothing when none is", () => {
    const meter = budgetMeter(
      { ...base, limits: { ...base.limits, approvalAbove: USD / 10n } },
      amount,
      "quoted",
    );
    expect(meter.approvalAbove).toEqual({ atomic: "100000", usd: "0.10" });
    expect("approvalAbove" in budgetMeter(base, amount, "quoted")).toBe(false);
  });

  it("never shows a negative remainder", () => {
    const over = { ...base, snapshot: { ...base.snapshot, daySpent: 12n * USD } };
    const meter = budgetMeter(over, amount, "quoted");
    expect(meter.daily.remaining).toEqual({ atomic: "0", usd: "0.00" });
    expect(meter.daily.remainingAfter).toEqual({ atomic: "0", usd: "0.00" });
  });

  it("counts spent and pending together against the limits", () => {
    expect(committedOf(base.snapshot)).toEqual({ today: 4n * USD, thisRequest: 2n * USD });
  });
});
