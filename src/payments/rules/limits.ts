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

/**
 * The amount limits a reservation is checked against: the three, and an operator's key's daily cap
 * (docs/deploy.md#operating-it), which counts everything the payment's caller committed in the
 * rolling 24 h over every wallet it pays from (the ledger keeps it by caller; without a caller it
 * counts nothing).
 */
export interface SpendLimits extends AmountLimits {
  /** The most the caller may commit in any rolling 24 hours, over all its wallets. Absent: no such cap. */
  callerDaily?: bigint;
}

/**
 * What an operator's key bounds, as the limits read it (the Payer's `KeyGrant`,
 * src/payments/ports/payer.ts, is one): caps a request can only tighten, and the wallets it may
 * pay from. Atomic USD units.
 */
export interface GrantCaps {
  perTransaction?: bigint | undefined;
  perRequest?: bigint | undefined;
  daily?: bigint | undefined;
  wallets?: readonly string[] | undefined;
}

/** The limits that apply to one request, after combining the server's config with the request's. */
export interface EffectiveLimits extends SpendLimits {
  allowedNetworks: string[];
  allowedServices: string[] | "any";
  /** Above this a delegated key does not sign: the user's wallet is asked. Absent: never asked. */
  approvalAbove?: bigint;
  /** The only wallets that may pay (an operator's key's); absent: any the request names. */
  allowedWallets?: readonly string[];
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
 * Combine server config with a request's limits and the caller's key
 * (docs/payments.md#spending-limits, said to users as LIMITS_RULE, src/protocol/limits-rule.ts): a
 * request's limits apply up to the service's caps and the key's caps; a limit left out gets the
 * service's default, within those caps. Each amount is min(request ?? default, key's cap ??
 * server's cap, server's cap), except the day: the wallet's day is min(request ?? default, server's
 * cap), and the key's daily cap counts the key's own spend over every wallet it pays from
 * (`callerDaily`); both hold. The key's wallets are the only ones that may pay. Networks and services are
 * intersections with the server's lists (a request list meets "any" as itself). Absent request
 * lists mean "whatever the server allows".
 */
export function resolveLimits(
  server: LimitsConfig,
  request?: SpendingLimitsInput,
  grant?: GrantCaps,
): EffectiveLimits {
  const amount = (key: keyof AmountLimits): bigint => {
    // The key's daily cap counts the key's own spend (`callerDaily`), not the wallet's: another
    // caller's payments from the same wallet must not use up this key's day.
    const keyCap = key === "daily" ? undefined : grant?.[key];
    const cap = minBig(keyCap ?? server.caps[key], server.caps[key]);
    return nonNegative(minBig(request?.[key] ?? server.defaults[key], cap));
  };

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
    ...(grant?.daily !== undefined ? { callerDaily: nonNegative(grant.daily) } : {}),
    ...(grant?.wallets !== undefined ? { allowedWallets: [...grant.wallets] } : {}),
  };
}

/**
 * Both grants at once: each cap the smaller, the wallets those both allow. For a payment held to a
 * key's caps at two times (asked, then approved): neither can loosen the other.
 */
export function tighterCaps(a: GrantCaps | undefined, b: GrantCaps | undefined): GrantCaps | undefined {
  if (!a || !b) return a ?? b;
  const least = (x?: bigint, y?: bigint) => (x === undefined ? y : y === undefined ? x : minBig(x, y));
  const wallets =
    a.wallets && b.wallets
      ? a.wallets.filter((w) => isWalletAllowed(w, { allowedWallets: b.wallets }))
      : (a.wallets ?? b.wallets);
  return {
    perTransaction: least(a.perTransaction, b.perTransaction),
    perRequest: least(a.perRequest, b.perRequest),
    daily: least(a.daily, b.daily),
    wallets,
  };
}

/**
 * Whether a wallet may pay under the limits (an operator's key's wallets). EVM addresses compare
 * without case (a checksum is only their spelling); any other address exactly.
 */
export function isWalletAllowed(address: string, limits: Pick<EffectiveLimits, "allowedWallets">): boolean {
  if (limits.allowedWallets === undefined) return true;
  const hex = address.startsWith("0x");
  return limits.allowedWallets.some(
    (w) => w === address || (hex && w.toLowerCase() === address.toLowerCase()),
  );
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
  /** The caller's spend in the rolling 24 h window over all its wallets, when its key caps it. */
  callerToday?: bigint;
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
  // In words: the per-payment cap is no budget that runs down, so nothing is "left" of it.
  const limit = {
    perTransaction: `per-payment limit of $${limitUsd}`,
    perRequest: `per-request limit of $${limitUsd} ($${remainingUsd} left in this request)`,
    daily: `daily limit of $${limitUsd} ($${remainingUsd} left in the last 24 h)`,
  }[refusal.limit];
  return {
    message: `Paying ${what} would exceed the ${limit}.`,
    details: { limit: refusal.limit, limitUsd, remainingUsd },
  };
}

/** What remains of each limit (never negative). `perTransaction` is the largest single payment allowed. */
export function limitRemaining(limits: SpendLimits, committed: Committed): AmountLimits {
  return {
    perTransaction: nonNegative(limits.perTransaction),
    perRequest: nonNegative(limits.perRequest - committed.thisRequest),
    daily: dailyOf(limits, committed).remaining,
  };
}

/**
 * The daily limit that binds: the wallet's, or the caller's key's over all its wallets when less of
 * it remains. `byCaller`: the key's.
 */
export function dailyOf(
  limits: SpendLimits,
  committed: Committed,
): { limit: bigint; remaining: bigint; byCaller: boolean } {
  const wallet = nonNegative(limits.daily - committed.today);
  if (limits.callerDaily === undefined || committed.callerToday === undefined) {
    return { limit: limits.daily, remaining: wallet, byCaller: false };
  }
  const caller = nonNegative(limits.callerDaily - committed.callerToday);
  return caller < wallet
    ? { limit: limits.callerDaily, remaining: caller, byCaller: true }
    : { limit: limits.daily, remaining: wallet, byCaller: false };
}

/**
 * Whether `amount` fits every limit given what is already committed. Checks perTransaction, then
 * perRequest, then daily, and names the first one the amount would exceed. The daily limit is the
 * one that binds (`dailyOf`: the wallet's, or the key's over all its wallets), named `daily` either
 * way with its size and what remains of it. A negative amount is a caller bug and throws.
 */
export function checkSpend(amount: bigint, limits: SpendLimits, committed: Committed): SpendCheck {
  if (amount < 0n) throw new RangeError("checkSpend: amount must not be negative");
  const remaining = limitRemaining(limits, committed);
  const sizes = { ...limits, daily: dailyOf(limits, committed).limit };
  for (const limit of ["perTransaction", "perRequest", "daily"] as const) {
    if (amount > remaining[limit]) {
      return {
        ok: false,
        limit,
        limitAtomic: sizes[limit],
        remainingAtomic: remaining[limit],
        amountAtomic: amount,
      };
    }
  }
  return { ok: true };
}
