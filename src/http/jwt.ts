import { createRemoteJWKSet, errors, type JWTPayload, jwtVerify } from "jose";
import { parseWallet } from "../chains/index.js";
import type { JwtConfig } from "../config/index.js";
import { AppError } from "../errors/index.js";
import { parseUsd } from "../money/index.js";
import type { Payer } from "../payments/face.js";

/**
 * Bearer JWTs from the operator's identity provider, for apps with their own login
 * (docs/deploy.md#logins-from-your-identity-provider). A token is verified with `jose` against
 * the provider's JWKS (fetched on first use, cached, fetched again for a key id it does not hold,
 * at most every 30 s), the configured issuer and audience, and its expiry, which it must carry.
 * Only asymmetric signatures are accepted. One claim names the caller; another, when configured,
 * may carry the caller's limits, which become its `KeyGrant` (the same shape an operator's key
 * has: caps its requests can only tighten, the wallets it may pay from).
 */

/** What an operator's key (or a token's limits claim) bounds: the payer's `grant`. */
export type KeyGrant = NonNullable<Payer["grant"]>;

export interface JwtCaller {
  caller: string;
  grant?: KeyGrant;
}

/** Verifies one bearer token: the caller, or undefined when it is not a valid token of the provider. */
export type JwtVerifier = (token: string) => Promise<JwtCaller | undefined>;

export interface JwtVerifierOptions extends JwtConfig {
  /** How long one fetch of the key set may take (default 5 s). */
  timeoutMs?: number;
}

/** Signature algorithms accepted: asymmetric only (a key set's public keys), never `none` or HMAC. */
export const JWT_ALGORITHMS = [
  "RS256",
  "RS384",
  "RS512",
  "PS256",
  "PS384",
  "PS512",
  "ES256",
  "ES384",
  "ES512",
  "EdDSA",
  "Ed25519",
];

/** Three base64url parts: a compact JWS (anything else is an opaque token, not ours to judge). */
const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
/** A caller's name as the ledger and the rate limit keep it: printable, bounded. */
const CALLER = /^[\x21-\x7e][\x20-\x7e]{0,199}$/;
const LIMIT_FIELDS = ["perTransaction", "perRequest", "daily"] as const;

/** The key set could not be read (the provider down, slow, or answering garbage): not the token's fault. */
function isProviderFailure(error: unknown): boolean {
  if (!(error instanceof errors.JOSEError)) return true;
  return (
    error instanceof errors.JWKSTimeout ||
    error instanceof errors.JWKSInvalid ||
    error.code === errors.JOSEError.code
  );
}

/** The limits claim as a grant; undefined when it is malformed (the token is then refused). */
export function grantOf(caller: string, claim: unknown): KeyGrant | undefined {
  if (typeof claim !== "object" || claim === null || Array.isArray(claim)) return undefined;
  const fields = claim as Record<string, unknown>;
  if (Object.keys(fields).some((k) => k !== "wallets" && !(LIMIT_FIELDS as readonly string[]).includes(k)))
    return undefined;
  const grant: KeyGrant = { name: caller };
  for (const field of LIMIT_FIELDS) {
    if (fields[field] === undefined) continue;
    if (typeof fields[field] !== "string") return undefined;
    const parsed = parseUsd(fields[field]);
    if (!parsed.ok) return undefined;
    grant[field] = parsed.atomic;
  }
  if (fields.wallets !== undefined) {
    if (!Array.isArray(fields.wallets) || fields.wallets.length > 100) return undefined;
    const wallets: string[] = [];
    for (const raw of fields.wallets) {
      const parsed = typeof raw === "string" ? parseWallet(raw) : undefined;
      if (!parsed?.ok) return undefined;
      wallets.push(parsed.wallet.address);
    }
    grant.wallets = wallets;
  }
  return grant;
}

/** The caller (and grant) a verified payload names, or undefined when its claims do not. */
function callerOf(payload: JWTPayload, config: JwtConfig): JwtCaller | undefined {
  const caller = payload[config.callerClaim];
  if (typeof caller !== "string" || !CALLER.test(caller)) return undefined;
  if (!config.limitsClaim || payload[config.limitsClaim] === undefined) return { caller };
  const grant = grantOf(caller, payload[config.limitsClaim]);
  return grant ? { caller, grant } : undefined;
}

/**
 * A verifier for the configured provider. It answers undefined for a token that is not a valid
 * JWT of the provider (malformed, another issuer or audience, expired, signed by a key not in the
 * set, without the caller claim, with a malformed limits claim), and throws `not_ready` (503,
 * retried) when the key set cannot be read: a provider outage is not the caller's fault. Nothing
 * of the token reaches an error message.
 */
export function createJwtVerifier(options: JwtVerifierOptions): JwtVerifier {
  const keys = createRemoteJWKSet(new URL(options.jwksUrl), { timeoutDuration: options.timeoutMs ?? 5_000 });
  return async (token) => {
    if (!COMPACT_JWS.test(token)) return undefined;
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, keys, {
        issuer: options.issuer,
        audience: options.audience,
        algorithms: JWT_ALGORITHMS,
        requiredClaims: ["exp"],
      }));
    } catch (error) {
      if (isProviderFailure(error))
        throw new AppError("not_ready", "The identity provider's keys cannot be read; retry shortly.");
      return undefined;
    }
    return callerOf(payload, options);
  };
}
