import type { Context } from "hono";
import { AppError } from "../errors/index.js";
import type { Caller, HttpMiddleware } from "./vars.js";

/** What authenticating a request needs: the known bearer tokens, and whether one is required. */
export interface Authenticate {
  /** Bearer token -> identity name. */
  authTokens: Map<string, string>;
  requireAuth: boolean;
}

/** The caller's bearer identity (and token); throws `unauthorized` for an unknown or missing one. */
export function authenticate(c: Context, deps: Authenticate): Caller {
  const header = c.req.header("authorization");
  if (!header) {
    if (deps.requireAuth) throw new AppError("unauthorized", "Send Authorization: Bearer <token>.");
    return {};
  }
  const match = /^Bearer\s+(\S+)$/i.exec(header);
  const identity = match?.[1] ? deps.authTokens.get(match[1]) : undefined;
  if (!match?.[1] || identity === undefined) {
    throw new AppError("unauthorized", "The bearer token is not valid.");
  }
  return { identity, token: match[1] };
}

/**
 * Authenticates every request of the routes it guards and puts the caller on `c.var.caller`; an
 * unknown or (when required) missing token ends the request with 401 problem+json.
 */
export function auth(deps: Authenticate): HttpMiddleware {
  return async (c, next) => {
    c.set("caller", authenticate(c, deps));
    await next();
  };
}
