import type { Context } from "hono";
import { AppError } from "../errors/index.js";
import type { RateLimiter } from "../ratelimit/rate-limit.js";
import { problemResponse } from "./problem.js";
import type { HttpMiddleware } from "./vars.js";

/**
 * The request quota (docs/protocol.md, "Limits"), keyed on the bearer identity, else the wallet,
 * else the client's IP; over it, 429 problem+json with `Retry-After`, before any model call. Runs
 * after auth and the chat request's validation (where a route has them); puts the key on `c.var.callerKey`.
 */
export function rateLimit(deps: {
  rateLimiter: RateLimiter;
  clientIp: (c: Context) => string;
}): HttpMiddleware {
  return async (c, next) => {
    // Routes without auth or a chat request (the approval page's) are keyed on the client's IP;
    // the wallet is a chat request's or an MCP session's (its headers), whichever the route has.
    const identity = c.var.caller?.identity;
    const wallet = c.var.chat?.wallet ?? c.var.payer?.wallet;
    const callerKey = identity
      ? `id:${identity}`
      : wallet
        ? `wallet:${wallet.address.toLowerCase()}`
        : `ip:${deps.clientIp(c)}`;
    const limited = await deps.rateLimiter.consume(callerKey);
    if (!limited.ok) {
      const wait = limited.retryAfterS;
      return problemResponse(
        new AppError("rate_limited", `Too many requests; wait ${wait} s before the next one.`, {
          details: { retryAfterSeconds: wait },
        }),
        { "Retry-After": String(wait) },
      );
    }
    c.set("callerKey", callerKey);
    await next();
  };
}
