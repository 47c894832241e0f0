import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { AppError } from "../../errors/index.js";
import type { OfferTerms } from "../run/index.js";
import type { Target } from "../x402/index.js";

/**
 * Quote ids (docs/payments.md, "Quote ids"): a price check that can be paid by its id, on any
 * instance that shares `QUOTE_SECRET`. The id is the quote's claims and their HMAC-SHA256: who may
 * pay it (the caller and the wallet), the request (URL with its query, method, body), the chosen
 * offer's payee, amount, asset and network, and an expiry. Changing any byte, presenting it as
 * another caller, or after its expiry, is refused before anything is probed or signed. The id
 * holds no secret that pays by itself: paying it still runs every check of a payment.
 */

/** The longest a quote id lives; the offer's own signing window may shorten it. */
export const QUOTE_TTL_MS = 5 * 60 * 1000;

/**
 * The longest quote id given or taken (it holds the request: URL, query, body). A quote whose id
 * would be longer gets none (`Quote.quoteId` absent): its request is too large to pay by id.
 */
export const QUOTE_ID_MAX_CHARS = 16 * 1024;

export interface QuoteClaims {
  /** The bearer identity, or null (no auth). */
  caller: string | null;
  /** The wallet the quote was made for. */
  wallet: string;
  target: Target;
  terms: OfferTerms;
  /** The quoted price, atomic units (decimal string). */
  amount: string;
  /** Epoch ms after which the id is refused. */
  expiresAt: number;
  /**
   * The service's name as discovery listed it when the quote was made (display only: the payment's
   * row, results and approval page show it). Signed with the rest, so a client cannot rename it.
   */
  name?: string;
}

/** The claims, under short fixed names, in a fixed order (what is signed). */
const FIELDS = ["caller", "wallet", "target", "terms", "amount", "expiresAt", "name"] as const;

const PREFIX = "q1";

export interface QuoteIds {
  issue(claims: QuoteClaims): string;
  /**
   * The claims of a quote id this service gave to `who`, unexpired at `now`; AppError otherwise:
   * `quote_invalid` (malformed, altered, made with another secret, or another caller's or
   * wallet's: the same answer, so nothing says which) or `quote_expired`.
   */
  open(quoteId: string, who: { caller: string | null; wallet: string | undefined }, now: number): QuoteClaims;
  /**
   * The payment id a quote id is paid under: the same for the same id on every instance, so the
   * ledger's primary key lets it be paid once. Shaped like every payment id (`pay_` and a UUID).
   */
  paymentIdOf(quoteId: string): string;
}

const invalid = () => new AppError("quote_invalid", "This quote id is not one this service gave you.");

/** `secret`: QUOTE_SECRET; absent, a random one (ids then hold on this process only). */
export function createQuoteIds(secret?: string): QuoteIds {
  const key = secret !== undefined ? Buffer.from(secret, "utf8") : randomBytes(32);
  const mac = (payload: string) => createHmac("sha256", key).update(`${PREFIX}.${payload}`).digest();
  return {
    issue(claims) {
      const ordered = Object.fromEntries(FIELDS.map((f) => [f, claims[f]]));
      const payload = Buffer.from(JSON.stringify(ordered), "utf8").toString("base64url");
      return `${PREFIX}.${payload}.${mac(payload).toString("base64url")}`;
    },
    open(quoteId, who, now) {
      if (quoteId.length > QUOTE_ID_MAX_CHARS) throw invalid();
      const [prefix, payload, signature, ...rest] = quoteId.split(".");
      if (prefix !== PREFIX || !payload || !signature || rest.length > 0) throw invalid();
      // The exact spelling is compared (not the decoded bytes): one id has one spelling, so it
      // names one payment.
      const given = Buffer.from(signature, "utf8");
      const expected = Buffer.from(mac(payload).toString("base64url"), "utf8");
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw invalid();
      // Signed by this service: the payload is its own JSON.
      const claims = JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as QuoteClaims;
      if (claims.caller !== who.caller || claims.wallet !== who.wallet) throw invalid();
      if (!(now < claims.expiresAt)) {
        throw new AppError("quote_expired", "This quote has expired; ask for a new quote.", {
          details: { quoteExpiresAt: new Date(claims.expiresAt).toISOString() },
        });
      }
      return claims;
    },
    paymentIdOf(quoteId) {
      const hex = createHash("sha256").update(quoteId).digest("hex");
      return `pay_${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
    },
  };
}
