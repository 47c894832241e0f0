/**
 * What the web page's payment cards read from the AI SDK tool-approval parts
 * (web/src/chat/approvals.ts): a part's state, and why its last answer failed (the descriptor's
 * `refusal` while it asks again, the part's error once it ended).
 */
import { describe, expect, it } from "vitest";
import type { PaymentUIMessage } from "../../src/client/ai.js";
import { PAYMENT_TOOL } from "../../src/client/index.js";
import { paymentToolStates } from "../../web/src/chat/approvals.js";
import { waitingCards, withStatus } from "../../web/src/chat/useLedgerStatus.js";

const INPUT = { paymentId: "p", service: { url: "http://svc.test/weather" } };

function message(parts: unknown[]): PaymentUIMessage {
  return { id: "m", role: "assistant", parts } as PaymentUIMessage;
}

describe("paymentToolStates", () => {
  it("reads each payment's part by id: asking, asking again with a refusal, ended in an error", () => {
    const states = paymentToolStates(
      message([
        { type: "text", text: "Weather costs $0.01." },
        { type: "data-payment", id: "a", data: { paymentId: "a" } },
        {
          type: `tool-${PAYMENT_TOOL}`,
          toolCallId: "a",
          state: "approval-requested",
          input: INPUT,
          approval: { id: "a", descriptor: { kind: "x402-payment" } },
        },
        {
          type: `tool-${PAYMENT_TOOL}`,
          toolCallId: "b",
          state: "approval-requested",
          input: INPUT,
          approval: { id: "b", descriptor: { refusal: "The wallet declined to sign the payment." } },
        },
        {
          type: `tool-${PAYMENT_TOOL}`,
          toolCallId: "c",
          state: "output-error",
          input: INPUT,
          errorText: "The payment ended expired: nothing was paid.",
          approval: { id: "c", approved: true },
        },
        {
          type: "tool-other",
          toolCallId: "d",
          state: "approval-requested",
          input: {},
          approval: { id: "d" },
        },
      ]),
    );
    expect([...states.entries()]).toEqual([
      ["a", { state: "approval-requested", error: undefined }],
      ["b", { state: "approval-requested", error: "The wallet declined to sign the payment." }],
      ["c", { state: "output-error", error: "The payment ended expired: nothing was paid." }],
    ]);
  });

  it("a refusal that is not text is not shown; no message, no parts", () => {
    const states = paymentToolStates(
      message([
        {
          type: `tool-${PAYMENT_TOOL}`,
          toolCallId: "a",
          state: "approval-requested",
          input: INPUT,
          approval: { id: "a", descriptor: { refusal: { html: "<b>x</b>" } } },
        },
      ]),
    );
    expect(states.get("a")).toEqual({ state: "approval-requested", error: undefined });
    expect(paymentToolStates(undefined).size).toBe(0);
  });
});

describe("withStatus (a waiting card takes the ledger's status)", () => {
  const waiting = (paymentId: string) =>
    message([
      {
        type: "data-payment",
        id: paymentId,
        data: {
          paymentId,
          status: "awaiting_approval",
          message: "Approve $0.01 to http://svc.test/weather in your wallet before 11:31:01 UTC.",
          service: { url: "http://svc.test/weather" },
        },
      },
    ]);
  const dataOf = (messages: PaymentUIMessage[]) => {
    const part = messages[0]?.parts[0] as { data: { status: string; message?: string } } | undefined;
    if (!part) throw new Error("no payment part");
    return part.data;
  };

  // Found by a black-box run: an expired card kept its "Approve ... before" line, as an alert.
  it("drops the ask to approve: an expired or declined card says so, a paid one keeps no stale words", () => {
    const expired = dataOf(withStatus([waiting("p")], "p", "expired"));
    expect(expired.status).toBe("expired");
    expect(expired.message).toMatch(/time to approve has passed: nothing was signed or paid/);
    expect(dataOf(withStatus([waiting("p")], "p", "rejected")).message).toMatch(/declined/);
    // Paid while this page waited (on the approval page, or before a reload): its answer is elsewhere.
    const settled = dataOf(withStatus([waiting("p")], "p", "settled"));
    expect(settled).toMatchObject({ status: "settled" });
    expect(settled.message).toBe("Paid. Its answer did not come to this page; Payments lists the payment.");
  });

  // Found by a black-box run: a reload while a payment settled left its card "Settling" for good.
  it("a card left under way when its answer broke off is checked too, and ends as the ledger says", () => {
    const cut = (paymentId: string, status: string) => {
      const m = waiting(paymentId);
      const part = m.parts[0] as { data: Record<string, unknown> };
      return {
        ...m,
        parts: [{ ...part, data: { ...part.data, status, message: undefined } }],
        metadata: { finishReason: "payment-unclear" },
      } as unknown as PaymentUIMessage;
    };
    const settling = [cut("s", "submitted"), cut("u", "unknown"), cut("done", "settled")];
    expect(waitingCards(settling).map((c) => c.paymentId)).toEqual(["s", "u"]);
    const [ended] = withStatus([cut("s", "submitted")], "s", "settled");
    expect(dataOf([ended as PaymentUIMessage])).toMatchObject({ status: "settled" });
    expect(dataOf([ended as PaymentUIMessage]).message).toMatch(
      /^Paid\. Its answer did not come to this page/,
    );
    expect(ended?.metadata?.finishReason).toBe("payment-complete");
    const [failed] = withStatus([cut("s", "signed")], "s", "failed");
    expect(failed?.metadata?.finishReason).toBe("payment-failed");
    // Left unclear when its turn ended (the answer was given): the chain's word, nothing of a cut.
    const [unclear] = withStatus([cut("u", "unknown")], "u", "settled");
    expect(dataOf([unclear as PaymentUIMessage]).message).toBe("Paid: the chain shows the payment settled.");
    // Found by the re-test: a reload restores the card as it was before Approve; the ledger has it
    // under way, and so does the card then (its turn unclear until it ends), not "waiting".
    const restored = { ...waiting("w"), metadata: { finishReason: "approval-required" } } as PaymentUIMessage;
    expect(waitingCards([restored])).toEqual([{ paymentId: "w", status: "awaiting_approval" }]);
    const [moving] = withStatus([restored], "w", "submitted");
    expect(dataOf([moving as PaymentUIMessage])).toMatchObject({ status: "submitted" });
    expect(dataOf([moving as PaymentUIMessage]).message).toBeUndefined();
    expect(moving?.metadata?.finishReason).toBe("payment-unclear");
    const [paid] = withStatus([moving as PaymentUIMessage], "w", "settled");
    expect(paid?.metadata?.finishReason).toBe("payment-complete");
    // Still under way at the ledger: nothing changes yet.
    expect(withStatus([cut("s", "submitted")], "s", "unknown")[0]?.metadata?.finishReason).toBe(
      "payment-unclear",
    );
  });
});
