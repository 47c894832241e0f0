import { x402Client, x402HTTPClient } from "@x402/core/client";
import type {
  Network,
  PaymentPayload,
  PaymentRequired,
  PaymentRequirements,
  SettleResponse,
} from "@x402/core/types";
import { familyOf, type NetworkSchemes, v1Networks } from "../../chains/index.js";
import { cleanText, nestsAtMost } from "../../protocol/index.js";
import { DEFAULT_TIMEOUT_SECONDS, type Requirement, signingWindowSeconds } from "../rules/index.js";

/**
 * The x402 protocol, through the official SDK: read a 402 (v2 `PAYMENT-REQUIRED` header or v1 JSON
 * body), sign exactly the one requirement our policy chose, encode the header that version expects,
 * and decode the settlement response. Policy lives elsewhere; this file only speaks the protocol.
 */

/**
 * v1 network names -> CAIP-2, so one policy covers both protocol versions: each chain family's
 * table comes from the x402 SDK's own v1 tables, so a name maps exactly when the SDK can sign for it.
 */
const V1_NETWORKS: Readonly<Record<string, string>> = v1Networks();

/** The CAIP-2 id of a v1 network name, or undefined for a name the SDK cannot sign for. */
export function v1NetworkToCaip2(name: string): string | undefined {
  return Object.hasOwn(V1_NETWORKS, name) ? V1_NETWORKS[name] : undefined;
}

/** Decoding headers needs no scheme or key: one stateless client serves every read. */
const reader = new x402HTTPClient(new x402Client());

/** A 402 as the service sent it, plus its offers normalized to v2 requirements with CAIP-2 networks. */
export interface PaymentDemand {
  version: 1 | 2;
  raw: PaymentRequired;
  /** Same order as `raw.accepts`. */
  offers: Requirement[];
  /** The reason a server gave for answering 402 again (e.g. a rejected payment). */
  error?: string;
}

/**
 * How deep a 402's JSON may nest: an offer's `extra` and a v1 offer's schemas sit a few levels in;
 * thousands of levels (a few KB) would overflow the stack of whatever walks or stores it later.
 */
export const MAX_DEMAND_DEPTH = 32;

/**
 * How many offers a 402 may make: a real one offers a few (networks times assets); hundreds of
 * thousands (a 1 MB body of `{}`) would cost seconds and hundreds of MB in every reason naming them.
 */
export const MAX_OFFERS = 20;

/**
 * The longest offer field read as it is. Networks (CAIP-2, at most 41), addresses (at most 64),
 * schemes and atomic amounts (at most 78 digits) are shorter; a longer one is cut and marked, which
 * leaves it invalid (nothing matches it, nothing is signed for it) and keeps megabytes of one out
 * of every quote, reason and record that names the offer.
 */
const MAX_FIELD_CHARS = 128;

const bounded = (text: string): string =>
  text.length <= MAX_FIELD_CHARS ? text : `${text.slice(0, 64)}... (${text.length} characters)`;

/** A field from outside as text, without calling anything of its own (an object's `toString`). */
const textOf = (value: unknown): string =>
  bounded(
    typeof value === "string"
      ? value
      : typeof value === "object" && value !== null
        ? "[object]"
        : String(value),
  );

/**
 * The service's reason for a 402, if it gave one as text: bounded, under the content rule (no
 * control characters: a NUL is text PostgreSQL refuses to store in the ledger's error).
 */
function reasonOf(error: unknown): string | undefined {
  if (typeof error !== "string") return undefined;
  return cleanText(error.slice(0, 500)).text || undefined;
}

/** Parse a 402 response; returns undefined when it carries no readable x402 demand. */
export function readPaymentDemand(
  getHeader: (name: string) => string | null,
  body: unknown,
): PaymentDemand | undefined {
  let raw: PaymentRequired;
  try {
    raw = reader.getPaymentRequiredResponse(getHeader, body);
  } catch {
    return undefined;
  }
  if (!raw || !Array.isArray(raw.accepts) || raw.accepts.length > MAX_OFFERS) return undefined;
  if (!raw.accepts.every((a: unknown) => typeof a === "object" && a !== null && !Array.isArray(a)))
    return undefined;
  // Nested past any real 402 (a service's hostile `extra`): unreadable, before anything copies it.
  if (!nestsAtMost(raw, MAX_DEMAND_DEPTH)) return undefined;
  const version = raw.x402Version === 1 ? 1 : 2;
  const offers = raw.accepts.map((a): Requirement => {
    const legacy = a as PaymentRequirements & { maxAmountRequired?: unknown };
    // v1 states its price only as `maxAmountRequired`, and that is what its scheme signs: an
    // `amount` next to it is never read, so what is quoted is what is signed.
    const amount = version === 1 ? legacy.maxAmountRequired : a.amount;
    const timeout: unknown = a.maxTimeoutSeconds;
    return {
      scheme: textOf(a.scheme),
      network:
        version === 1
          ? (v1NetworkToCaip2(textOf(a.network)) ?? `v1:${textOf(a.network).slice(0, 60)}`)
          : textOf(a.network),
      // Absent: "". Not a string (a number, say): kept visible in what is quoted, refused as an amount.
      amount:
        typeof amount === "string"
          ? bounded(amount)
          : amount === undefined
            ? ""
            : `${String(JSON.stringify(amount)).slice(0, 40)} (not a string)`,
      asset: textOf(a.asset),
      payTo: textOf(a.payTo),
      // Absent means "the payer's default window" (0, see chooseOffer); anything not a number is
      // kept invalid rather than coerced.
      maxTimeoutSeconds:
        timeout === undefined || timeout === null ? 0 : typeof timeout === "number" ? timeout : Number.NaN,
      ...(a.extra && typeof a.extra === "object" ? { extra: a.extra } : {}),
    };
  });
  const error = reasonOf(raw.error);
  return { version, raw, offers, ...(error ? { error } : {}) };
}

export interface SignedPayment {
  /** Headers to send with the paid retry (`PAYMENT-SIGNATURE` for v2, `X-PAYMENT` for v1). Secret until sent. */
  headers: Record<string, string>;
  /** What the reconciler needs later: EVM authorizer, nonce and validBefore. Never the signature. */
  authorization: Record<string, string>;
  /**
   * The payload the headers encode. Secret when a key signed it; a wallet draft's payload holds no
   * signature yet and is what an approval stores (docs/payments.md, "Approval").
   */
  payload: PaymentPayload;
}

/** The headers a paid request carries for a complete payload (`PAYMENT-SIGNATURE` or `X-PAYMENT`). */
export function paymentHeaders(payload: PaymentPayload): Record<string, string> {
  return reader.encodePaymentSignatureHeader(payload);
}

/**
 * Why a payment could not be signed. The message says which step failed and why, with URLs cut to
 * their origin and anything key-like removed, so it can be logged; it never carries key material.
 */
export class SigningError extends Error {
  override readonly name = "SigningError";
}

/** What the policy checked, which the signed payment must match. */
export interface SigningExpectation {
  amount: bigint;
  payTo: string;
  /**
   * The authorization window to sign, in seconds (`chooseOffer`'s `timeoutSeconds`). Absent: the
   * offer's own, or {@link DEFAULT_TIMEOUT_SECONDS} when it states 0.
   */
  maxTimeoutSeconds?: number;
  /** The payer's clock, epoch seconds, that the signed window is checked against (default: the system's). */
  nowS?: number;
}

/**
 * Sign the offer at `index` of a demand, and nothing else: the SDK's selector is pinned to that one
 * requirement, and the SDK's own spend controls are turned off because this service's policy and
 * ledger are the single authority (they ran before this call). A v1 demand is signed with the v1
 * scheme. The requirement handed to the scheme carries our window as `maxTimeoutSeconds` (an
 * offer's 0 would otherwise sign an authorization that is already expired); the v2 payload still
 * echoes the offer exactly as the service made it, so the service recognises it.
 */
export async function signOffer(
  demand: PaymentDemand,
  index: number,
  schemes: NetworkSchemes,
  expected: SigningExpectation,
): Promise<SignedPayment> {
  const chosen = demand.raw.accepts[index];
  const offer = demand.offers[index];
  if (!chosen || !offer) throw new SigningError("signOffer: no offer at that index");
  const label = `x402 v${demand.version} ${JSON.stringify(String(chosen.network).slice(0, 60))}`;
  // Only the plain exact transfer is signed: no Permit2 or approval flows (chooseOffer refuses them
  // first; this is defence in depth), and no extensions a service could use to make us sign more.
  const method = (chosen.extra as { assetTransferMethod?: unknown } | undefined)?.assetTransferMethod;
  if (method !== undefined && method !== "eip3009") {
    throw new SigningError(
      `unsupported asset transfer method ${JSON.stringify(String(method).slice(0, 40))} (${label}); only plain transfers are signed`,
    );
  }
  const window =
    expected.maxTimeoutSeconds ?? signingWindowSeconds(offer.maxTimeoutSeconds, DEFAULT_TIMEOUT_SECONDS);
  if (!Number.isSafeInteger(window) || window <= 0) {
    throw new SigningError(`no valid authorization window to sign (${label})`);
  }
  const toSign = { ...chosen, maxTimeoutSeconds: window } as PaymentRequirements;
  const client = new x402Client((_version, options) => {
    const match = options.find((o) => o === toSign);
    if (!match) throw new Error("the chosen offer is no longer available");
    return match;
  });
  if (demand.version === 1) client.registerV1(String(chosen.network), schemes.v1);
  else client.register(chosen.network as Network, schemes.v2);
  client.setSpendControls(false);
  const { extensions: _ignored, ...bare } = demand.raw;
  let payload: PaymentPayload;
  try {
    payload = await client.createPaymentPayload({ ...bare, accepts: [toSign] });
  } catch (error) {
    throw new SigningError(`the ${label} scheme could not sign: ${safeDetail(error)}`);
  }
  if (payload.x402Version !== 1 && payload.accepted) payload = { ...payload, accepted: chosen };
  const authorization = checkSigned(
    payload,
    offer.network,
    { ...expected, asset: offer.asset, maxTimeoutSeconds: window },
    label,
  );
  const headers = new x402HTTPClient(client).encodePaymentSignatureHeader(payload);
  return { headers, authorization, payload };
}

/** An error's first line, bounded, with URLs cut to their origin and long key-like strings removed. */
export function safeDetail(error: unknown): string {
  const text = (error instanceof Error ? error.message : String(error)).split("\n")[0] ?? "";
  return text
    .replace(/\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>]+/gi, (url) => {
      try {
        return new URL(url).origin;
      } catch {
        return "[url]";
      }
    })
    .replace(/(0x)?[0-9a-fA-F]{64,}/g, "[redacted]")
    .replace(/[1-9A-HJ-NP-Za-km-z]{40,}/g, "[redacted]")
    .slice(0, 300);
}

/**
 * Defence in depth: what was signed must equal what was quoted and checked; the network's chain
 * family compares it and says what the reconciler will need (never the signature).
 */
export function checkSigned(
  payload: PaymentPayload,
  network: string,
  expected: { amount: bigint; payTo: string; asset: string; maxTimeoutSeconds: number; nowS?: number },
  label: string,
): Record<string, string> {
  const family = familyOf(network);
  if (!family) throw new SigningError(`unknown network family (${label})`);
  try {
    return family.authorization(payload, expected, expected.nowS ?? Math.floor(Date.now() / 1000));
  } catch (error) {
    throw new SigningError(`${safeDetail(error)} (${label})`);
  }
}

/** Decode `PAYMENT-RESPONSE` / `X-PAYMENT-RESPONSE`; undefined when absent or unreadable. */
export function readSettlement(getHeader: (name: string) => string | null): SettleResponse | undefined {
  try {
    return reader.getPaymentSettleResponse(getHeader);
  } catch {
    return undefined;
  }
}
