import { describe, expect, it } from "vitest";
import { PAYMENT_STATUSES } from "../../protocol/stream.js";
import {
  assertTransition,
  COMMITTED_STATUSES,
  canTransition,
  IllegalTransitionError,
  isCommitted,
  isFinal,
  LEDGER_STATUSES,
} from "./state.js";

describe("payment state machine", () => {
  it("allows exactly the documented transitions", () => {
    const allowed = PAYMENT_STATUSES.flatMap((from) =>
      PAYMENT_STATUSES.filter((to) => canTransition(from, to)).map((to) => `${from}->${to}`),
    );
    expect(allowed.sort()).toEqual(
      [
        "quoted->refused",
        "quoted->reserved",
        "quoted->failed",
        "quoted->awaiting_approval",
        "awaiting_approval->reserved",
        "awaiting_approval->rejected",
        "awaiting_approval->expired",
        "awaiting_approval->failed",
        "reserved->signed",
        "reserved->released",
        "reserved->failed",
        "signed->submitted",
        "signed->unknown",
        "signed->failed",
        "submitted->settled",
        "submitted->failed",
        "submitted->unknown",
        "unknown->settled",
        "unknown->failed",
      ].sort(),
    );
  });

  it("never leads back to reserved, so nothing is signed twice: only a quote or an approval is reserved", () => {
    for (const from of PAYMENT_STATUSES)
      expect(canTransition(from, "reserved")).toBe(from === "quoted" || from === "awaiting_approval");
    // Nothing that was ever reserved (or signed) can be reserved again.
    for (const from of LEDGER_STATUSES.filter((s) => s !== "awaiting_approval"))
      expect(canTransition(from, "reserved")).toBe(false);
    // And nothing leads back to awaiting approval, so an approval is used at most once.
    for (const from of PAYMENT_STATUSES)
      expect(canTransition(from, "awaiting_approval")).toBe(from === "quoted");
  });

  it("does not release a signed payment: a signature may already be usable", () => {
    for (const from of ["signed", "submitted", "unknown"] as const) {
      expect(canTransition(from, "released")).toBe(false);
    }
  });

  it("throws on an illegal step", () => {
    expect(() => assertTransition("settled", "failed")).toThrow(IllegalTransitionError);
    expect(() => assertTransition("unknown", "released")).toThrow(/unknown -> released/);
    expect(() => assertTransition("reserved", "signed")).not.toThrow();
  });

  it("counts pending and unknown as spent, failed and released as free", () => {
    expect(COMMITTED_STATUSES).toEqual(["reserved", "signed", "submitted", "settled", "unknown"]);
    expect(isCommitted("failed")).toBe(false);
    expect(isCommitted("released")).toBe(false);
    expect(isCommitted("quoted")).toBe(false);
    expect(isCommitted("refused")).toBe(false);
    // A payment waiting for the wallet holds no budget; declined or expired ones never did.
    expect(isCommitted("awaiting_approval")).toBe(false);
    expect(isCommitted("rejected")).toBe(false);
    expect(isCommitted("expired")).toBe(false);
  });

  it("marks settled, failed, released, rejected and expired terminal; terminal ledger statuses have no way out", () => {
    expect(LEDGER_STATUSES.filter(isFinal)).toEqual(["settled", "failed", "released", "rejected", "expired"]);
    for (const from of LEDGER_STATUSES.filter(isFinal)) {
      for (const to of PAYMENT_STATUSES) expect(canTransition(from, to)).toBe(false);
    }
  });
});
