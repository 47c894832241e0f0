import { formatUsd } from "../../money/index.js";
import type { SpendingLimitsInput } from "../../protocol/request.js";

/**
 * Spending limits as pure functions: which limits apply to a request and whether an amount fits
 * them (which offer may be paid is offers.ts). No I/O, so every rule is property-tested on its own;
 * the ledger runs `checkSpend` inside its locking transaction so the same rule holds under
 * concurrency.
 */

/** The three amount limits, in atomic USD units (6 decimals). */
export interface AmountLimits {
  /** The most one payment may cost. */
  perTransaction: bigint;
  /** The most one chat request (all its payments together) may cost. */
  perRequest: bigint;
  /** The most a wallet may spend in any rolling 24 hours. */
  daily: bigint;
}

/** Server-side limits configuration: the defaults a request gets and the caps it can never exceed. */
export interface LimitsConfig {
  /** Used when a request has a wallet but leaves a limit out. Clamped to `caps`. */
  defaults: AmountLimits;
  /** Hard ceilings: a request's limits can only tighten them. */
  caps: AmountLimits;
  /** CAIP-2 network ids the server is willing to pay on at all. */
  allowedNetworks: string[];
  /** http(s) origins the server is willing to pay, or "any". */
  allowedServices: string[] | "any";
  /**
   * Payments above this ask the user's wallet even when a delegated server key could sign them
   * (docs/payments.md, "Approval"). Absent: a delegated key signs anything within the limits.
   */
  approvalAbove?: bigint;
}

/** The limits that apply to one request, after combining the server's config with the request's. */
export interface EffectiveLimits extends AmountLimits {
  allowedNetworks: string[];
  allowedServices: string[] | "any";
  /** Above this a delegated key does not sign: the user's wallet is asked. Absent: never asked. */
  approvalAbove?: bigint;
}

const USD = 1_000_000n;

/** Suggested server defaults and caps (docs/payments.md): $1 / $2 / $10 defaults, $100 / $100 / $1000 caps. */
export const SUGGESTED_LIMITS = {
  defaults: { perTransaction: 1n * USD, perRequest: 2n * USD, daily: 10n * USD },
  caps: { perTransaction: 100n * USD, perRequest: 100n * USD, daily: 1000n * USD },
} as const satisfies Pick<LimitsConfig, "defaults" | "caps">;

const minBig = (a: bigint, b: bigint): bigint => (a < b ? a : b);
const nonNegative = (a: bigint): bigint => (a < 0n ? 0n : a);

/** The origin of a URL or origin string; the input unchanged when it does not parse. */
export function normalizeOrigin(value: string): string {
  try {
    return new URL(value).origin;
  } catch {
    return value;
  }
}

/**
 * Combine server config with a request's limits. A request can only tighten: each amount is
 * min(request ?? default, cap); networks and services are intersections with the server's lists
 * (a request list meets "any" as itself). Absent request lists mean "whatever the server allows".
 */
export function resolveLimits(server: LimitsConfig, request?: SpendingLimitsInput): EffectiveLimits {
  const amount = (key: keyof AmountLimits): bigint =>
    nonNegative(minBig(request?.[key] ?? server.defaults[key], server.caps[key]));

  const serverNetworks = new Set(server.allowedNetworks);
  const allowedNetworks = request?.allowedNetworks
    ? unique(request.allowedNetworks.filter((n) => serverNetworks.has(n)))
    : unique(server.allowedNetworks);

  let allowedServices: string[] | "any";
  const requested = request?.allowedServices
    ? unique(request.allowedServices.map(normalizeOrigin))
    : undefined;
  if (server.allowedServices === "any") {
    allowedServices = requested ?? "any";
  } else {
    const serverServices = new Set(server.allowedServices.map(normalizeOrigin));
    allowedServices = requested ? requested.filter((s) => serverServices.has(s)) : [...serverServices];
  }

  // Like the limits, a request can only lower the approval threshold, never raise it.
  const thresholds = [server.approvalAbove, request?.approvalAbove].filter((t) => t !== undefined);
  const approvalAbove = thresholds.length > 0 ? thresholds.reduce(minBig) : undefined;

  return {
    perTransaction: amount("perTransaction"),
    perRequest: amount("perRequest"),
    daily: amount("daily"),
    allowedNetworks,
    allowedServices,
    ...(approvalAbove !== undefined ? { approvalAbove } : {}),
  };
}

function unique(values: string[]): string[] {
  return [...new Set(values)];
}

/** Whether a network (CAIP-2 id) is allowed by the effective limits. */
export function isNetworkAllowed(network: string, limits: Pick<EffectiveLimits, "allowedNetworks">): boolean {
  return limits.allowedNetworks.includes(network);
}

/** Whether a service URL's origin is allowed by the effective limits. */
export function isServiceAllowed(url: string, limits: Pick<EffectiveLimits, "allowedServices">): boolean {
  if (limits.allowedServices === "any") return true;
  let origin: string;
  try {
    origin = new URL(url).origin;
  } catch {
    return false;
  }
  return limits.allowedServices.includes(origin);
}

/** What is already committed (spent or pending: settled, unknown, reserved, signed, submitted) that a new payment adds to. */
export interface Committed {
  /** The wallet's spend in the rolling 24 h window. */
  today: bigint;
  /** This chat request's spend. */
  thisRequest: bigint;
}

export type LimitName = keyof AmountLimits;

/** Why an amount was refused: which limit, its size, what remained of it, and the price. */
export interface LimitRefusal {
  ok: false;
  limit: LimitName;
  limitAtomic: bigint;
  remainingAtomic: bigint;
  amountAtomic: bigint;
}

export type SpendCheck = { ok: true } | LimitRefusal;

/**
 * What a `limit_exceeded` refusal says, written once: the sentence (`what` names the payment:
 * "$0.01", or "$0.01 to https://...") and the details a client reads.
 */
export function limitExceeded(
  what: string,
  refusal: Pick<LimitRefusal, "limit" | "limitAtomic" | "remainingAtomic">,
): { message: string; details: { limit: LimitName; limitUsd: string; remainingUsd: string } } {
  const limitUsd = formatUsd(refusal.limitAtomic);
  const remainingUsd = formatUsd(refusal.remainingAtomic);
  return {
    message: `Paying ${what} would exceed the ${refusal.limit} limit of $${limitUsd} ($${remainingUsd} left).`,
    details: { limit: refusal.limit, limitUsd, remainingUsd },
  };
}

/** What remains of each limit (never negative). `perTransaction` is the largest single payment allowed. */
export function limitRemaining(limits: AmountLimits, committed: Committed): AmountLimits {
  return {
    perTransaction: nonNegative(limits.perTransaction),
    perRequest: nonNegative(limits.perRequest - committed.thisRequest),
    daily: nonNegative(limits.daily - committed.today),
  };
}

/**
 * Whether `amount` fits every limit given what is already committed. Checks perTransaction, then
 * perRequest, then daily, and names the first one the amount would exceed. A negative amount is
 * a caller bug and throws.
 */
export function checkSpend(amount: bigint, limits: AmountLimits, committed: Committed): SpendCheck {
  if (amount < 0n) throw new RangeError("checkSpend: amount must not be negative");
  const remaining = limitRemaining(limits, committed);
  for (const limit of ["perTransaction", "perRequest", "daily"] as const) {
    if (amount > remaining[limit]) {
      return {
        ok: false,
        limit,
        limitAtomic: limits[limit],
        remainingAtomic: remaining[limit],
        amountAtomic: amount,
      };
    }
  }
  return { ok: true };
}
