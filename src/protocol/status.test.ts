import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { isCommitted, isFinal, LEDGER_STATUSES, PAYMENT_STATUS, statusesWhere } from "./status.js";
import { PAYMENT_STATUSES } from "./stream.js";

/** The rows of docs/payments.md's status table: status, row?, counts as spent. */
function documentedStatuses(): Array<{ status: string; row: boolean; committed: boolean }> {
  const text = readFileSync(new URL("../../docs/payments.md", import.meta.url), "utf8");
  return [...text.matchAll(/^\| `([a-z_]+)` *\| (yes|no) *\|[^|]*\| ([^|]+)\|$/gm)].map((m) => ({
    status: m[1] ?? "",
    row: m[2] === "yes",
    committed: (m[3] ?? "").includes("yes"),
  }));
}

describe("the payment status table", () => {
  it("has one entry per status of the protocol, in its order", () => {
    expect(Object.keys(PAYMENT_STATUS)).toEqual([...PAYMENT_STATUSES]);
  });

  it("agrees with the table in docs/payments.md (row, and what holds budget)", () => {
    const documented = documentedStatuses();
    expect(documented.map((d) => d.status).sort()).toEqual([...PAYMENT_STATUSES].sort());
    for (const { status, row, committed } of documented) {
      const facts = PAYMENT_STATUS[status as keyof typeof PAYMENT_STATUS];
      expect({ status, row: facts.row, committed: facts.budget !== "none" }).toEqual({
        status,
        row,
        committed,
      });
    }
  });

  it("holds budget for unknown and never calls it final (money-safety: it may have gone)", () => {
    expect(isCommitted("unknown")).toBe(true);
    expect(isFinal("unknown")).toBe(false);
    expect(statusesWhere((f) => f.budget === "spent")).toEqual(["settled", "unknown"]);
    expect(statusesWhere((f) => f.budget === "pending")).toEqual(["reserved", "signed", "submitted"]);
  });

  it("lists every row status, and only those, as ledger statuses", () => {
    expect(LEDGER_STATUSES).toEqual(PAYMENT_STATUSES.filter((s) => s !== "quoted" && s !== "refused"));
  });

  it.each(PAYMENT_STATUSES.map((status) => [status]))(
    "%s: a final status is neither in flight nor pending",
    (status) => {
      const facts = PAYMENT_STATUS[status];
      if (facts.final) {
        expect(facts.inFlight).toBe(false);
        expect(facts.budget).not.toBe("pending");
      }
    },
  );
});
