import type { Context } from "hono";
import { AppError } from "../errors/index.js";
import type { AuthVars, Middleware } from "./vars.js";

/** What authenticating a request needs: the known bearer tokens, and whether one is required. */
export interface Authenticate {
  /** Bearer token -> identity name. */
  authTokens: Map<string, string>;
  requireAuth: boolean;
}

/** The caller's bearer identity (and token); throws `unauthorized` for an unknown or missing one. */
export function authenticate(c: Context, deps: Authenticate): AuthVars {
  const header = c.req.header("authorization");
  if (!header) {
    if (deps.requireAuth) throw new AppError("unauthorized", "Send Authorization: Bearer <token>.");
    return { caller: undefined, bearerToken: undefined };
  }
  const match = /^Bearer\s+(\S+)$/i.exec(header);
  const identity = match?.[1] ? deps.authTokens.get(match[1]) : undefined;
  if (!match?.[1] || identity === undefined) {
    throw new AppError("unauthorized", "The bearer token is not valid.");
  }
  return { caller: identity, bearerToken: match[1] };
}

/**
 * Authenticates every request of the routes it guards and puts the caller on `c.var.caller` (and
 * its token on `c.var.bearerToken`); an unknown or (when required) missing token ends the request
 * with 401 problem+json.
 */
export function auth(deps: Authenticate): Middleware<AuthVars> {
  return async (c, next) => {
    const { caller, bearerToken } = authenticate(c, deps);
    c.set("caller", caller);
    c.set("bearerToken", bearerToken);
    await next();
  };
}
