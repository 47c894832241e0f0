import { formatUsd } from "../../money/index.js";
import { networkLabel } from "../../protocol/index.js";
import {
  type Committed,
  checkSpend,
  type EffectiveLimits,
  isNetworkAllowed,
  isServiceAllowed,
  isWalletAllowed,
  type LimitRefusal,
  limitExceeded,
} from "./limits.js";

/**
 * A payment stored awaiting the user's wallet, checked again when the wallet answers against the
 * limits in force then (docs/payments.md#approval): an approval cannot outlive a tightened limit.
 * The same rules as a payment's admission (the key's wallets, the network and service allow-lists,
 * `checkSpend`), in that order; the offer rules that read only the server's settings were passed when it was stored.
 */

/** What the limits read of a stored payment. */
export interface StoredPayment {
  paymentId: string;
  /** The wallet that pays. */
  wallet: string;
  network: string;
  /** The paid service's URL. */
  service: string;
  amount: bigint;
}

export interface ApprovalRefusal {
  ok: false;
  reason: "limit_exceeded";
  message: string;
  details: Record<string, unknown>;
}

export type ApprovalCheck = { ok: true } | ApprovalRefusal;

/** How a refusal names the payment: "$0.01 to https://...". */
export const approvalSubject = (payment: Pick<StoredPayment, "amount" | "service">): string =>
  `$${formatUsd(payment.amount)} to ${payment.service}`;

/** What every refusal of this payment carries in its details. */
export const approvalDetails = (payment: Pick<StoredPayment, "paymentId" | "amount">) => ({
  paymentId: payment.paymentId,
  priceUsd: formatUsd(payment.amount),
});

/** Whether the limits and allow-lists in force still admit a stored payment, given what is committed. */
export function checkApproval(
  payment: StoredPayment,
  limits: EffectiveLimits,
  committed: Committed,
): ApprovalCheck {
  const what = approvalSubject(payment);
  const refused = approvalDetails(payment);
  if (!isWalletAllowed(payment.wallet, limits)) {
    return refuse(`Your key may not pay ${what} from wallet ${payment.wallet}.`, {
      ...refused,
      limit: "wallets",
      wallet: payment.wallet,
    });
  }
  if (!isNetworkAllowed(payment.network, limits)) {
    return refuse(`Paying ${what} on ${networkLabel(payment.network)} is no longer allowed by your limits.`, {
      ...refused,
      limit: "allowedNetworks",
      network: payment.network,
    });
  }
  if (!isServiceAllowed(payment.service, limits)) {
    return refuse(`Paying ${what} is no longer allowed by your limits.`, {
      ...refused,
      limit: "allowedServices",
      service: payment.service,
    });
  }
  const check = checkSpend(payment.amount, limits, committed);
  return check.ok ? check : approvalOverLimit(payment, check);
}

/** An amount limit refused a stored payment (now, or at its reservation): which, its size, what remained. */
export function approvalOverLimit(
  payment: StoredPayment,
  refusal: Pick<LimitRefusal, "limit" | "limitAtomic" | "remainingAtomic">,
): ApprovalRefusal {
  const exceeded = limitExceeded(approvalSubject(payment), refusal);
  return refuse(exceeded.message, { ...approvalDetails(payment), ...exceeded.details });
}

function refuse(message: string, details: Record<string, unknown>): ApprovalRefusal {
  return { ok: false, reason: "limit_exceeded", message, details };
}
