import type { Context } from "hono";
import { AppError } from "../errors/index.js";
import type { KeyLookup, KeyScope } from "../operator/index.js";
import { WALLET_SESSION_PREFIX } from "../protocol/index.js";
import type { JwtVerifier } from "./jwt.js";
import type { AuthVars, Middleware } from "./vars.js";

/** The operator keys as auth reads them: each instance's copy, refreshed from the store (src/operator). */
export interface KeyAuth {
  lookup(token: string): KeyLookup;
}

/** What authenticating a request needs: the known bearer tokens, and whether one is required. */
export interface Authenticate {
  /** Bearer token -> identity name (AUTH_TOKENS, the devnet's and SIGNERS_FILE's tokens). */
  authTokens: Map<string, string>;
  requireAuth: boolean;
  /** Operator keys (docs/deploy.md#operating-it), looked up first: a key's token is always the key's. */
  keys?: KeyAuth;
  /**
   * Bearer JWTs of the operator's identity provider (docs/deploy.md#logins-from-your-identity-provider),
   * tried last. Their callers are named `jwt:<claim>`, so a subject never shares a name (and so
   * payments, history and approvals) with an operator key or an AUTH_TOKENS identity.
   */
  jwt?: JwtVerifier;
}

/** The prefix of every caller a JWT names. */
export const JWT_CALLER_PREFIX = "jwt:";

/** Why an operator key's token no longer works. */
const ENDED = {
  revoked: "This API key was revoked.",
  expired: "This API key has expired.",
  rotated: "This API key's token was rotated: use the token the rotation gave.",
} as const;

const ANONYMOUS: AuthVars = { caller: undefined, bearerToken: undefined, grant: undefined };

/**
 * The caller's bearer identity (and token, and an operator key's grant); throws `unauthorized`
 * for an unknown, revoked or expired one, or a missing one when required, and `forbidden` for an
 * operator key used outside its scopes (`scope`: which of them this route is).
 */
export async function authenticate(c: Context, deps: Authenticate, scope?: KeyScope): Promise<AuthVars> {
  const header = c.req.header("authorization");
  if (!header) {
    if (deps.requireAuth) throw new AppError("unauthorized", "Send Authorization: Bearer <token>.");
    return ANONYMOUS;
  }
  const token = /^Bearer\s+(\S+)$/i.exec(header)?.[1];
  if (!token) throw new AppError("unauthorized", "The bearer token is not valid.");
  // A wallet's session reads its payment history only (src/http/payments.ts takes it there).
  if (token.startsWith(WALLET_SESSION_PREFIX))
    throw new AppError("forbidden", "A wallet sign-in may only read the payment history.", {
      details: { scope: scope ?? "chat", scopes: ["history"] },
    });
  // An operator key's token is the key's, wherever else it is listed (a SIGNERS_FILE binding it
  // to a server key, AUTH_TOKENS): its caps, scopes, revocation and pause always apply.
  const key = deps.keys?.lookup(token) ?? { kind: "none" };
  const identity = key.kind === "none" ? deps.authTokens.get(token) : undefined;
  if (identity !== undefined) return { caller: identity, bearerToken: token, grant: undefined };
  if (key.kind !== "none" && key.kind !== "active") throw new AppError("unauthorized", ENDED[key.kind]);
  if (key.kind === "none" && deps.jwt) {
    const verified = await deps.jwt(token);
    if (verified)
      return {
        caller: `${JWT_CALLER_PREFIX}${verified.caller}`,
        bearerToken: token,
        grant: verified.grant
          ? { ...verified.grant, name: `${JWT_CALLER_PREFIX}${verified.caller}` }
          : undefined,
      };
  }
  if (key.kind !== "active") throw new AppError("unauthorized", "The bearer token is not valid.");
  if (scope && !key.scopes.includes(scope))
    throw new AppError(
      "forbidden",
      `This API key may not use ${scope === "history" ? "the payment history" : scope === "mcp" ? "MCP" : "the chat"}.`,
      {
        details: { scope, scopes: key.scopes },
      },
    );
  return { caller: key.name, bearerToken: token, grant: key.grant };
}

/**
 * Authenticates every request of the routes it guards and puts the caller on `c.var.caller` (its
 * token on `c.var.bearerToken`, an operator key's grant on `c.var.grant`); an unknown, revoked,
 * expired or (when required) missing token ends the request with 401 problem+json, a key outside
 * its scopes with 403 `forbidden`.
 */
export function auth(deps: Authenticate, scope?: KeyScope): Middleware<AuthVars> {
  return async (c, next) => {
    const { caller, bearerToken, grant } = await authenticate(c, deps, scope);
    c.set("caller", caller);
    c.set("bearerToken", bearerToken);
    c.set("grant", grant);
    await next();
  };
}
