import type { Context } from "hono";
import { AppError } from "../errors/index.js";
import type { RateLimiter } from "../ratelimit/rate-limit.js";
import { problemResponse } from "./problem.js";
import type { Middleware, PayerVars, QuotaVars, VarsContext } from "./vars.js";

export interface RateLimitDeps {
  rateLimiter: RateLimiter;
  clientIp: (c: Context) => string;
}

/**
 * The request quota (docs/protocol.md, "Limits"): over it, 429 problem+json with `Retry-After`,
 * before any model call. `key` names whose quota the request counts against; it is put on
 * `c.var.callerKey` (idempotency keys are scoped to it).
 */
function limitBy<Reads extends object>(
  deps: RateLimitDeps,
  key: (c: Context, vars: Readonly<Reads>) => string,
): Middleware<QuotaVars, Reads> {
  return async (c, next) => {
    const callerKey = key(c, c.var as Readonly<Reads>);
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
    (c as unknown as VarsContext<QuotaVars>).set("callerKey", callerKey);
    await next();
  };
}

/** The quota of a payer's routes (the chat, MCP): keyed on the bearer identity, else the wallet, else the IP. */
export function rateLimitPayer(deps: RateLimitDeps): Middleware<QuotaVars, PayerVars> {
  return limitBy<PayerVars>(deps, (c, vars) => {
    const { caller, wallet } = vars.payer;
    if (caller) return `id:${caller}`;
    if (!wallet) return `ip:${deps.clientIp(c)}`;
    // EVM addresses are case-insensitive; Solana's base58 is not (two wallets may differ in case only).
    return `wallet:${wallet.chain === "evm" ? wallet.address.toLowerCase() : wallet.address}`;
  });
}

/** The quota of routes with no caller (the approval page's): keyed on the client's IP. */
export function rateLimitIp(deps: RateLimitDeps): Middleware<QuotaVars> {
  return limitBy(deps, (c) => `ip:${deps.clientIp(c)}`);
}
