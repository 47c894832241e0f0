import { describe, expect, it } from "vitest";
import type { PaymentUpdate } from "../protocol/stream.js";
import { endedUpdate } from "./answer.js";

/**
 * A payment the service says has ended when its approval is answered (declined or paid elsewhere:
 * another browser tab, the approval page; or lapsed): the card takes the ledger's status, and its
 * words say what became of it, never its ask to approve. Found by a black-box run (h52): a card
 * read "Rejected" and, under it, "Approve $0.01 ... in your wallet before 4:09:39 AM."
 */
const waiting = {
  paymentId: "pay_1",
  status: "awaiting_approval",
  service: { url: "http://127.0.0.1:4021/weather?city=Dakar" },
  amount: { atomic: "10000", usd: "0.01" },
  network: "eip155:31337",
  message: "Approve $0.01 to http://127.0.0.1:4021/weather?city=Dakar in your wallet before 4:09:39 AM.",
  approval: { wallet: "0x976EA74026E726554dB657fA54763abd0C3a0aa9", expiresAt: "2026-11-30T04:09:39.000Z" },
} as unknown as PaymentUpdate;

describe("endedUpdate", () => {
  it.each([
    [
      "approval_used",
      { paymentStatus: "rejected" },
      "rejected",
      "The payment was declined: nothing was signed or paid.",
    ],
    ["approval_expired", {}, "expired", "The time to approve has passed: nothing was signed or paid."],
    ["approval_used", { paymentStatus: "settled" }, "settled", "Paid. Its answer did not come to this page"],
  ])("%s (%o): %s, said so, asking nothing", (code, problem, status, words) => {
    const ended = endedUpdate(waiting, code, problem);
    expect(ended?.status).toBe(status);
    expect(ended?.message).toContain(words);
    expect(ended?.approval).toBeUndefined();
  });

  it("under way elsewhere: its status, and no words it cannot stand by", () => {
    const ended = endedUpdate(waiting, "approval_used", { paymentStatus: "submitted" });
    expect(ended).toMatchObject({ status: "submitted", paymentId: "pay_1" });
    expect(ended?.message).toBeUndefined();
    expect(endedUpdate(waiting, "approval_used", { paymentStatus: "awaiting_approval" })).toBeUndefined();
  });
});
