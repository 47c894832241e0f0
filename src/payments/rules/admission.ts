import { formatUsd, parseUsd } from "../../money/index.js";
import type { Wallet } from "../../protocol/index.js";
import {
  type Committed,
  checkSpend,
  type EffectiveLimits,
  isWalletAllowed,
  limitExceeded,
} from "./limits.js";
import { chooseOffer, type Requirement } from "./offers.js";
import type { Reason } from "./outcome.js";

/**
 * The one admission check, shared by `get_quote` and `pay_and_fetch`, so a quote and a payment can
 * never disagree about what policy allows: offer choice (scheme, transfer method, network, asset,
 * timeout), the allow-lists, the price the user was shown, the time left, the amount limits, and
 * who signs: a server-held key or the user's own wallet (docs/payments.md#approval). Pure: the
 * caller reads what is committed (a quote) or lets the ledger's atomic reservation run the same
 * `checkSpend` under its lock (a payment), and looks up whether a server key may sign.
 */

/** Server settings admission reads. */
export interface AdmissionPolicy {
  /** network -> allowed asset addresses / mints (USDC-like, 6 decimals). */
  assets: Record<string, string[]>;
  preferredNetworks: string[];
  /** Longest authorization window signed. */
  maxTimeoutSeconds: number;
  /** No payment starts when less than this is left before the request's deadline. */
  minTimeLeftMs: number;
}

export interface AdmissionRequest {
  wallet: Wallet;
  limits: EffectiveLimits;
  timeLeftMs: number;
  /** What the wallet and this request already committed; absent: amounts are left to the reservation. */
  committed?: Committed;
  /** The price the user was shown (`maxUsd`), as the model passed it. */
  shownUsd?: string;
  /** Whether a server-held key may sign for this wallet with this request's bearer token. */
  serverKey: boolean;
  /** A tab's session key, when it signs in the wallet's place (docs/payments.md#tabs). */
  sessionKey?: string;
}

/** The offer policy chose: what would be signed, and the window to sign it for. */
export interface ChosenOffer {
  offer: Requirement;
  index: number;
  amount: bigint;
  timeoutSeconds: number;
}

/**
 * Who signs an admitted payment: a server-held key, or the user's own wallet, because no server key
 * may sign for it, or because it costs more than `approvalAbove` lets a delegated key sign alone.
 */
export type Payer = { by: "server" } | { by: "wallet"; because: "no_server_key" | "above_approval" };

/** Who signs a payment of `amount`, given whether a server key may and the approval threshold. */
export function payerFor(
  amount: bigint,
  limits: Pick<EffectiveLimits, "approvalAbove">,
  serverKey: boolean,
): Payer {
  if (!serverKey) return { by: "wallet", because: "no_server_key" };
  if (limits.approvalAbove !== undefined && amount > limits.approvalAbove) {
    return { by: "wallet", because: "above_approval" };
  }
  return { by: "server" };
}

export type Admission =
  | ({ ok: true; payer: Payer } & ChosenOffer)
  | {
      ok: false;
      reason: Reason;
      message: string;
      details: Record<string, unknown>;
      /** Present when an offer was chosen before a later rule refused it (the quote is streamed). */
      chosen?: ChosenOffer;
    };

export function admit(offers: Requirement[], request: AdmissionRequest, policy: AdmissionPolicy): Admission {
  const { limits } = request;
  const choice = chooseOffer(offers, {
    walletChain: request.wallet.chain,
    payers: request.sessionKey ? [request.wallet.address, request.sessionKey] : [request.wallet.address],
    allowedNetworks: limits.allowedNetworks,
    allowedAssets: policy.assets,
    preferredNetworks: policy.preferredNetworks,
    maxTimeoutSeconds: policy.maxTimeoutSeconds,
  });
  if (!choice.ok) {
    const networkRule = choice.rejections.some((r) => r.code === "network_not_allowed");
    return {
      ok: false,
      reason: networkRule ? "network_not_allowed" : "no_acceptable_offer",
      message: choice.reason,
      details: {
        ...(networkRule ? { limit: "allowedNetworks" } : {}),
        offers: choice.rejections.map((r) => ({ network: r.network, reason: r.code })),
      },
    };
  }
  const chosen: ChosenOffer = {
    offer: choice.offer,
    index: offers.indexOf(choice.offer),
    amount: choice.amount,
    timeoutSeconds: choice.timeoutSeconds,
  };
  const refuse = (reason: Reason, message: string, details: Record<string, unknown> = {}): Admission => ({
    ok: false,
    reason,
    message,
    details,
    chosen,
  });
  const price = formatUsd(chosen.amount);

  if (request.shownUsd !== undefined) {
    const shown = parseUsd(request.shownUsd);
    if (!shown.ok)
      return refuse("invalid_max_usd", `maxUsd "${request.shownUsd.slice(0, 20)}" is not a USD amount.`);
    if (chosen.amount > shown.atomic) {
      return refuse(
        "price_changed",
        `The service asks $${price}, more than the $${formatUsd(shown.atomic)} agreed (its quote, or maxUsd); not paid.`,
        { quotedUsd: formatUsd(shown.atomic) },
      );
    }
  }
  if (request.timeLeftMs < policy.minTimeLeftMs) {
    return refuse("too_little_time", "Too little time is left in this request to complete a payment safely.");
  }
  if (request.committed) {
    const check = checkSpend(chosen.amount, limits, request.committed);
    if (!check.ok) {
      const { message, details } = limitExceeded(`$${price}`, check);
      return refuse("limit_exceeded", message, details);
    }
  }
  return { ok: true, ...chosen, payer: payerFor(chosen.amount, limits, request.serverKey) };
}

/**
 * The caller's key does not let this wallet pay (its `wallets`): refused before the service is
 * asked anything, with code `limit_exceeded` (`limit: "wallets"`).
 */
export function refuseWallet(
  wallet: Wallet,
  limits: Pick<EffectiveLimits, "allowedWallets">,
): { reason: "wallet_not_allowed"; message: string; details: Record<string, unknown> } | undefined {
  if (isWalletAllowed(wallet.address, limits)) return undefined;
  return {
    reason: "wallet_not_allowed",
    message: `Your key may not pay from wallet ${wallet.address}.`,
    details: { limit: "wallets", wallet: wallet.address },
  };
}
