import type { Context } from "hono";
import { AppError } from "../errors/index.js";
import type { QuotaTier, RateLimiter } from "../ratelimit/rate-limit.js";
import { problemResponse } from "./problem.js";
import type { Middleware, PayerVars, QuotaVars, VarsContext } from "./vars.js";

export interface RateLimitDeps {
  rateLimiter: RateLimiter;
  clientIp: (c: Context) => string;
}

/** Whose quota a request counts against, and in which tier. */
interface QuotaKey {
  key: string;
  tier: QuotaTier;
}

/**
 * The request quota (docs/protocol.md, "Limits"): over it, 429 problem+json with `Retry-After`,
 * before any model call. `key` names whose quota the request counts against; it is put on
 * `c.var.callerKey` (idempotency keys are scoped to it). A request `counts` says costs nothing
 * (MCP's handshake and notifications: src/http/mcp.ts) is let through uncounted.
 */
function limitBy<Reads extends object>(
  deps: RateLimitDeps,
  key: (c: Context, vars: Readonly<Reads>) => QuotaKey,
  counts: (vars: Readonly<Reads>) => boolean = () => true,
): Middleware<QuotaVars, Reads> {
  return async (c, next) => {
    const vars = c.var as Readonly<Reads>;
    const { key: callerKey, tier } = key(c, vars);
    const limited = counts(vars) ? await deps.rateLimiter.consume(callerKey, tier) : { ok: true as const };
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

/**
 * The quota of a payer's routes (the chat, MCP): keyed on the bearer identity (the identified
 * tier, `RATE_LIMIT_POINTS`), else the wallet, else the IP (both anonymous: a wallet is only
 * named, not proven; `RATE_LIMIT_ANONYMOUS_POINTS`). `counts` picks the requests that count
 * (default: all).
 */
export function rateLimitPayer<Reads extends PayerVars = PayerVars>(
  deps: RateLimitDeps,
  counts?: (vars: Readonly<Reads>) => boolean,
): Middleware<QuotaVars, Reads> {
  return limitBy<Reads>(
    deps,
    (c, vars) => {
      const { caller, wallet } = vars.payer;
      if (caller) return { key: `id:${caller}`, tier: "identified" };
      if (!wallet) return { key: `ip:${deps.clientIp(c)}`, tier: "anonymous" };
      // EVM addresses are case-insensitive; Solana's base58 is not (two wallets may differ in case only).
      const address = wallet.chain === "evm" ? wallet.address.toLowerCase() : wallet.address;
      return { key: `wallet:${address}`, tier: "anonymous" };
    },
    counts,
  );
}

/** The quota of routes with no caller (the approval page's): keyed on the client's IP, anonymous. */
export function rateLimitIp(deps: RateLimitDeps): Middleware<QuotaVars> {
  return limitBy(deps, (c) => ({ key: `ip:${deps.clientIp(c)}`, tier: "anonymous" }));
}
