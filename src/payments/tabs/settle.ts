import type { PaymentPayload } from "@x402/core/types";
import type { Requirement } from "../rules/index.js";
import { safeDetail } from "../x402/index.js";

/**
 * A tab's own transfers (its funding by the wallet, the rest back to it) are plain x402 `exact`
 * payments to and from the session key, settled by a facilitator's `/verify` and `/settle`
 * (the x402 facilitator API), so they need no gas of the service's and no seller.
 */
export type Settlement =
  | { kind: "settled"; transaction: string }
  /** The facilitator refused it before sending: nothing moved. */
  | { kind: "refused"; error: string }
  /** Sent, or maybe sent, with no proof: the chain decides (the keeper resolves it). */
  | { kind: "unclear"; error: string };

export interface TabSettler {
  settle(payload: PaymentPayload, requirement: Requirement): Promise<Settlement>;
}

export function facilitatorSettler(url: string, timeoutMs = 15_000): TabSettler {
  const post = async (path: string, payload: PaymentPayload, requirement: Requirement) => {
    const response = await fetch(new URL(path, url.endsWith("/") ? url : `${url}/`), {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ x402Version: 2, paymentPayload: payload, paymentRequirements: requirement }),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const body = (await response.json().catch(() => ({}))) as Record<string, unknown>;
    return { status: response.status, body };
  };
  return {
    async settle(payload, requirement) {
      try {
        const verified = await post("verify", payload, requirement);
        if (verified.body.isValid !== true) {
          const reason = String(verified.body.invalidReason ?? `verify answered ${verified.status}`);
          return { kind: "refused", error: reason.slice(0, 200) };
        }
      } catch (error) {
        return { kind: "refused", error: `the facilitator could not verify it: ${safeDetail(error)}` };
      }
      try {
        const settled = await post("settle", payload, requirement);
        const tx = settled.body.transaction;
        if (settled.body.success === true && typeof tx === "string" && tx !== "") {
          return { kind: "settled", transaction: tx };
        }
        const reason = String(settled.body.errorReason ?? `settle answered ${settled.status}`);
        return { kind: "unclear", error: reason.slice(0, 200) };
      } catch (error) {
        return { kind: "unclear", error: safeDetail(error) };
      }
    },
  };
}
