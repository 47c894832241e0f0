import { describe, expect, it } from "vitest";
import { type AnswerAfterSending, REASONS, unclearReason } from "./index.js";

/** What an answer after sending means (pure): the reason, never the service's words as a code. */

const answer = (status: number): AnswerAfterSending => ({ status });
const rejected = (rejection: string): AnswerAfterSending => ({ status: 402, rejection });

describe("an unclear answer after sending", () => {
  it.each([
    ["no answer", undefined, "no_response"],
    ["a 402 saying insufficient funds", rejected("insufficient_funds"), "rejected_insufficient_funds"],
    ["a 402 for any other reason", rejected("nonce already used"), "payment_rejected"],
    ["a 402 without a readable demand", answer(402), "payment_rejected"],
    ["a redirect", answer(302), "redirected_after_payment"],
    ["a success without a settlement proof", answer(200), "no_settlement_proof"],
    ["a server error", answer(503), "service_error_after_payment"],
    ["a client error", answer(404), "service_error_after_payment"],
  ] as const)("%s", (_name, response, reason) => {
    const unclear = unclearReason(response);
    expect(unclear.reason).toBe(reason);
    expect(Object.keys(REASONS)).toContain(unclear.reason);
  });

  it("keeps the service's own words in the detail, bounded, and out of the message", () => {
    const words = `insufficient ${"x".repeat(500)}`;
    const unclear = unclearReason(rejected(words));
    expect(unclear.detail.length).toBeLessThanOrEqual(220);
    expect(unclear.detail).toContain("insufficient");
    expect(unclear.message).not.toContain("xxx");
  });
});
