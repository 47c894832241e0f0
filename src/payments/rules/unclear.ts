import type { Reason } from "./outcome.js";

/** How a payment whose outcome was unclear right after sending stands now. */
export interface Unclear {
  reason: Reason;
  message: string;
  /** The service's own words or status, for the ledger and the log. */
  detail: string;
}

/**
 * The service's answer to the paid request, as far as the rule needs it: its status and, on a 402,
 * the error its payment demand gave (x402/probe.ts `paymentRejection` reads it off the wire).
 */
export interface AnswerAfterSending {
  status: number;
  rejection?: string | undefined;
}

/** What an answer after sending means: the closed reason, our message, and the service's own words. */
export function unclearReason(response: AnswerAfterSending | undefined): Unclear {
  if (!response) {
    return {
      reason: "no_response",
      message: `The service did not answer after the payment was sent.`,
      detail: "no response after sending",
    };
  }
  if (response.status === 402) {
    const why = (response.rejection ?? "payment rejected").slice(0, 200);
    if (/insufficient/i.test(why)) {
      return {
        reason: "rejected_insufficient_funds",
        // Its word only: while unclear the client also hears it may have gone through (report.ts).
        message: "The service answered that the wallet's funds did not cover the payment.",
        detail: why,
      };
    }
    return {
      reason: "payment_rejected",
      message:
        "The service answered that it did not accept the payment, but the authorization it holds stays valid until it expires; it will not be paid again automatically.",
      detail: `402 after paying: ${why}`,
    };
  }
  if (response.status >= 300 && response.status < 400) {
    return {
      reason: "redirected_after_payment",
      message: `The service redirected the paid request elsewhere, which is not followed.`,
      detail: `HTTP ${response.status} after sending`,
    };
  }
  if (response.status >= 200 && response.status < 300) {
    return {
      reason: "no_settlement_proof",
      message: `The service answered without confirming settlement.`,
      detail: `HTTP ${response.status} without a settlement response`,
    };
  }
  return {
    reason: "service_error_after_payment",
    message: `The service failed (HTTP ${response.status}) after the payment was sent.`,
    detail: `HTTP ${response.status} after sending`,
  };
}
