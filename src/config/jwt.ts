import { ConfigError } from "./errors.js";

/**
 * Bearer JWTs from the operator's identity provider (docs/deploy.md#logins-from-your-identity-provider):
 * verified against its JWKS, issuer and audience; one claim names the caller, another may carry
 * its limits. All three of JWKS_URL, JWT_ISSUER and JWT_AUDIENCE, or none.
 */
export interface JwtConfig {
  /** The identity provider's JSON Web Key Set (https; http only on loopback). */
  jwksUrl: string;
  /** The `iss` a token must carry. */
  issuer: string;
  /** The `aud` values accepted (a token must carry one of them). */
  audience: string[];
  /** The claim whose string value is the caller (default `sub`). */
  callerClaim: string;
  /** The claim holding `{ perTransaction?, perRequest?, daily?, wallets? }` (USD strings), if any. */
  limitsClaim?: string;
}

export interface JwtEnv {
  JWKS_URL?: string | undefined;
  JWT_ISSUER?: string | undefined;
  JWT_AUDIENCE?: string | undefined;
  JWT_CALLER_CLAIM: string;
  JWT_LIMITS_CLAIM?: string | undefined;
}

const LOOPBACK = new Set(["localhost", "127.0.0.1", "[::1]"]);

/** The JWT settings, or undefined when none is set; a partial or unsafe set is a ConfigError. */
export function parseJwtConfig(e: JwtEnv): JwtConfig | undefined {
  const set = { JWKS_URL: e.JWKS_URL, JWT_ISSUER: e.JWT_ISSUER, JWT_AUDIENCE: e.JWT_AUDIENCE };
  const missing = Object.entries(set)
    .filter(([, value]) => !value)
    .map(([name]) => name);
  if (missing.length === 3) return undefined;
  if (missing.length > 0)
    throw new ConfigError(
      `Invalid configuration:\n  ${missing.join(", ")}: required with ${Object.keys(set)
        .filter((name) => !missing.includes(name))
        .join(", ")} (bearer JWTs need the key set, the issuer and the audience)`,
    );
  const jwks = new URL(e.JWKS_URL as string);
  if (jwks.protocol !== "https:" && !(jwks.protocol === "http:" && LOOPBACK.has(jwks.hostname)))
    throw new ConfigError("Invalid configuration:\n  JWKS_URL: must be https (http only on loopback)");
  const audience = (e.JWT_AUDIENCE as string)
    .split(",")
    .map((a) => a.trim())
    .filter(Boolean);
  return {
    jwksUrl: jwks.href,
    issuer: e.JWT_ISSUER as string,
    audience,
    callerClaim: e.JWT_CALLER_CLAIM,
    ...(e.JWT_LIMITS_CLAIM ? { limitsClaim: e.JWT_LIMITS_CLAIM } : {}),
  };
}
