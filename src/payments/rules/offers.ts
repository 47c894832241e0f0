import { type ChainName, payeeProblem, sameAsset, samePayee, walletCanUse } from "../../chains/index.js";
import { isNetworkAllowed } from "./limits.js";

/**
 * Which x402 offer (if any) may be paid, as a pure function (`chooseOffer`), and the signing window
 * an offer gets. No I/O; the limits an offer's amount must fit are limits.ts.
 */

/** An x402 v2 payment requirement (one entry of `accepts`), as a paid service offers it. Untrusted. */
export interface Requirement {
  scheme: string;
  network: string;
  /** Atomic units of `asset`, as a decimal string. */
  amount: string;
  /** Token contract address (EVM) or mint (Solana). */
  asset: string;
  payTo: string;
  maxTimeoutSeconds: number;
  extra?: Record<string, unknown>;
}

/** The terms of an offer a payment must keep: who is paid, on which network, in which asset. */
export interface OfferTerms {
  payTo: string;
  network: string;
  asset: string;
}

/**
 * Whether an offer keeps the given terms: the same network, token and payee, each compared as the
 * network's chain family compares addresses (EVM ignores hex case, base58 is exact).
 */
export function sameTerms(offer: OfferTerms, terms: OfferTerms): boolean {
  return (
    offer.network === terms.network &&
    sameAsset(offer.network, offer.asset, terms.asset) &&
    samePayee(offer.network, offer.payTo, terms.payTo)
  );
}

/** Whether two offers ask the same payment: scheme, amount and terms (a stored approval's, docs/payments.md#approval). */
export function sameOffer(a: Requirement, b: Requirement): boolean {
  return a.scheme === b.scheme && a.amount === b.amount && sameTerms(a, b);
}

/** What the chooser needs to know about the payer and the policy. */
export interface OfferContext {
  walletChain: ChainName;
  /**
   * Who signs or pays: the wallet, and a tab's session key when it signs in the wallet's place. An
   * offer must not make one of them the transaction's fee payer.
   */
  payers?: string[];
  allowedNetworks: string[];
  /** network -> asset addresses (EVM, compared case-insensitively) or mints (Solana, exact). */
  allowedAssets: Record<string, string[]>;
  /** Networks in order of preference; others come after, in no preferred order. */
  preferredNetworks: string[];
  /** Longest authorization window we sign; longer ones keep a payment pending too long (e.g. 600). */
  maxTimeoutSeconds: number;
}

/** Why one offer was not acceptable. Codes are stable snake_case. */
export interface OfferRejection {
  index: number;
  network: string;
  code:
    | "malformed_offer"
    | "unsupported_scheme"
    | "network_not_allowed"
    | "wrong_chain"
    | "asset_not_allowed"
    | "unsupported_transfer_method"
    | "invalid_timeout"
    | "timeout_too_long"
    | "invalid_amount"
    | "invalid_payee"
    | "wallet_pays_fee";
  reason: string;
}

export type OfferChoice =
  | {
      ok: true;
      offer: Requirement;
      amount: bigint;
      /** The authorization window to sign, in seconds (see {@link signingWindowSeconds}). */
      timeoutSeconds: number;
    }
  | { ok: false; code: "no_offers" | "no_acceptable_offer"; reason: string; rejections: OfferRejection[] };

const ATOMIC = /^(0|[1-9][0-9]{0,77})$/;

/** Whether an offer's `amount` is one this service reads: a whole number of atomic units, as a string without leading zeros. */
export function isAtomicAmount(amount: unknown): amount is string {
  return typeof amount === "string" && ATOMIC.test(amount);
}

/**
 * The authorization window signed when an offer states none (`maxTimeoutSeconds` 0, or absent in
 * the 402): long enough for a service to verify and settle, short enough that an unclear payment
 * is resolved soon. A Solana transaction is bounded by its blockhash's lifetime anyway.
 */
export const DEFAULT_TIMEOUT_SECONDS = 60;

/**
 * The window to sign for an offer's `maxTimeoutSeconds`: the stated value, or for 0 ("the payer's
 * choice") {@link DEFAULT_TIMEOUT_SECONDS} within the server's bound `max`. Only meaningful for an
 * offer `chooseOffer` accepted.
 */
export function signingWindowSeconds(stated: number, max: number): number {
  return stated === 0 ? Math.max(1, Math.min(DEFAULT_TIMEOUT_SECONDS, max)) : stated;
}

/** An untrusted value quoted in a reason: bounded (an address whole) and JSON-escaped. */
const quoteValue = (value: unknown): string => JSON.stringify(String(value).slice(0, 64));

function rejectOffer(
  offer: Requirement,
  ctx: OfferContext,
): Omit<OfferRejection, "index" | "network"> | null {
  const o = offer as Partial<Record<keyof Requirement, unknown>> | null;
  if (
    typeof o !== "object" ||
    o === null ||
    typeof o.scheme !== "string" ||
    typeof o.network !== "string" ||
    typeof o.asset !== "string" ||
    typeof o.payTo !== "string" ||
    o.payTo === "" ||
    typeof o.amount !== "string"
  ) {
    return { code: "malformed_offer", reason: "is not a well-formed x402 v2 payment requirement" };
  }
  if (o.scheme !== "exact") {
    return {
      code: "unsupported_scheme",
      reason: `scheme ${quoteValue(o.scheme)} is not supported (only "exact")`,
    };
  }
  // Only a plain transfer is signed (EIP-3009 on EVM, the exact SVM transaction): never a Permit2
  // or approval flow, which could grant more than this one payment.
  const method = (o.extra as { assetTransferMethod?: unknown } | undefined)?.assetTransferMethod;
  if (method !== undefined && method !== "eip3009") {
    return {
      code: "unsupported_transfer_method",
      reason: `asset transfer method ${quoteValue(method)} is not supported (only "eip3009")`,
    };
  }
  if (!walletCanUse(ctx.walletChain, o.network)) {
    return {
      code: "wrong_chain",
      reason: `network ${o.network} is not on the wallet's chain (${ctx.walletChain})`,
    };
  }
  if (!isNetworkAllowed(o.network, ctx)) {
    return { code: "network_not_allowed", reason: `network ${o.network} is not allowed by policy` };
  }
  const assets = Object.hasOwn(ctx.allowedAssets, o.network) ? ctx.allowedAssets[o.network] : undefined;
  if (!assets?.some((a) => sameAsset(o.network as string, a, o.asset as string))) {
    return { code: "asset_not_allowed", reason: `asset ${o.asset} is not allowed on ${o.network}` };
  }
  // Absent or 0: the payer chooses the window (signingWindowSeconds). Anything else must be a
  // whole number of seconds within the server's bound.
  const timeout = o.maxTimeoutSeconds ?? 0;
  if (typeof timeout !== "number" || !Number.isSafeInteger(timeout) || timeout < 0) {
    return {
      code: "invalid_timeout",
      // NaN is how the wire keeps a value that was not a number at all (a string "60", say).
      reason: `maxTimeoutSeconds ${Number.isNaN(timeout) ? "(not a number)" : quoteValue(timeout)} is not a whole number of seconds >= 0`,
    };
  }
  if (timeout > ctx.maxTimeoutSeconds) {
    return {
      code: "timeout_too_long",
      reason: `maxTimeoutSeconds ${timeout} exceeds the ${ctx.maxTimeoutSeconds} s we accept`,
    };
  }
  if (!isAtomicAmount(o.amount)) {
    return { code: "invalid_amount", reason: "amount is not a non-negative whole number of atomic units" };
  }
  const network = o.network;
  const payer = (address: string) => ctx.payers?.some((p) => samePayee(network, address, p)) === true;
  const payee =
    payeeProblem(o.network, o.payTo) ??
    (samePayee(o.network, o.payTo, o.asset)
      ? "the token's own contract (mint), where it is lost"
      : undefined) ??
    // A payment to itself moves nothing, yet would count against the limits (h51).
    (payer(o.payTo) ? "the paying wallet itself: nothing would be paid" : undefined);
  if (payee) return { code: "invalid_payee", reason: `payTo ${quoteValue(o.payTo)}: ${payee}` };
  // Solana's exact scheme: the facilitator named in `extra.feePayer` pays the fee and co-signs. Named
  // as the wallet itself (or the tab's session key that signs for it), the transaction is complete
  // with that one signature: it pays the fee, and the service could send it without any facilitator.
  const feePayer = (o.extra as { feePayer?: unknown } | undefined)?.feePayer;
  if (typeof feePayer === "string" && payer(feePayer)) {
    return { code: "wallet_pays_fee", reason: "the offer makes the paying wallet pay the transaction's fee" };
  }
  return null;
}

/**
 * Choose the offer to pay among a 402's `accepts`, or refuse. Only offers passing every rule
 * (exact scheme with a plain transfer; network allowed and on the wallet's chain; asset allowed on
 * that network; a bounded timeout, 0 meaning ours; a valid atomic amount) are candidates; among
 * them the first preferred network wins, then the cheapest, then the service's own order. Never
 * falls back to an offer that failed a rule: a refusal lists why each offer was rejected. The
 * window to sign comes with the choice (`timeoutSeconds`).
 */
export function chooseOffer(offers: readonly Requirement[], ctx: OfferContext): OfferChoice {
  if (!Array.isArray(offers) || offers.length === 0) {
    return { ok: false, code: "no_offers", reason: "the service offered no way to pay", rejections: [] };
  }
  const rejections: OfferRejection[] = [];
  const candidates: { offer: Requirement; amount: bigint; rank: number; index: number }[] = [];
  offers.forEach((offer, index) => {
    const rejection = rejectOffer(offer, ctx);
    if (rejection) {
      const network = typeof offer?.network === "string" ? offer.network.slice(0, 100) : "?";
      rejections.push({ index, network, ...rejection });
      return;
    }
    const preferred = ctx.preferredNetworks.indexOf(offer.network);
    candidates.push({
      offer,
      amount: BigInt(offer.amount),
      rank: preferred === -1 ? ctx.preferredNetworks.length : preferred,
      index,
    });
  });
  candidates.sort((a, b) => {
    if (a.rank !== b.rank) return a.rank - b.rank;
    if (a.amount !== b.amount) return a.amount < b.amount ? -1 : 1;
    return a.index - b.index;
  });
  const best = candidates[0];
  if (best) {
    const timeoutSeconds = signingWindowSeconds(best.offer.maxTimeoutSeconds ?? 0, ctx.maxTimeoutSeconds);
    return { ok: true, offer: best.offer, amount: best.amount, timeoutSeconds };
  }
  const reason = rejections.map((r) => `offer ${r.index + 1} (${r.network}) ${r.reason}`).join("; ");
  return { ok: false, code: "no_acceptable_offer", reason: `No offer is acceptable: ${reason}`, rejections };
}
