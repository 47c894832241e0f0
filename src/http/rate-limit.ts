import type { Context } from "hono";
import { AppError } from "../errors/index.js";
import type { QuotaTier, RateLimiter } from "../ratelimit/rate-limit.js";
import { problemResponse } from "./problem.js";
import type { Middleware, PayerVars, QuotaVars, VarsContext } from "./vars.js";

export interface RateLimitDeps {
  rateLimiter: RateLimiter;
  clientIp: (c: Context) => string;
}

/**
 * Whose quota a request counts against, and in which tier; `also`: other quotas it counts against;
 * `scope`: the caller its idempotency keys belong to, when that is not `key`.
 */
interface QuotaKey {
  key: string;
  tier: QuotaTier;
  also?: { key: string; tier: QuotaTier };
  scope?: string;
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
    const { key: quotaKey, tier, also, scope } = key(c, vars);
    let limited: Awaited<ReturnType<RateLimiter["consume"]>> = { ok: true };
    if (counts(vars)) {
      limited = await deps.rateLimiter.consume(quotaKey, tier);
      if (limited.ok && also) limited = await deps.rateLimiter.consume(also.key, also.tier);
    }
    if (!limited.ok) {
      const wait = limited.retryAfterS;
      return problemResponse(
        new AppError("rate_limited", `Too many requests; wait ${wait} s before the next one.`, {
          details: { retryAfterSeconds: wait },
        }),
        { "Retry-After": String(wait) },
      );
    }
    (c as unknown as VarsContext<QuotaVars>).set("callerKey", scope ?? quotaKey);
    await next();
  };
}

/**
 * The quota of a payer's routes (the chat, MCP): keyed on the bearer identity (the identified
 * tier, `RATE_LIMIT_POINTS`), else the wallet and the IP together, else the IP (both anonymous,
 * `RATE_LIMIT_ANONYMOUS_POINTS`). A wallet is only named, not proven, so its quota is kept per IP:
 * someone naming another's wallet uses up their own quota, not the wallet owner's. A request
 * naming a wallet also counts against its IP's quota of the identified tier, so naming a new
 * wallet each time does not multiply an IP's requests past one caller's. Its idempotency keys
 * belong to the wallet (a retry from a new address still finds its first attempt). `counts`
 * picks the requests that count (default: all).
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
      const ip = deps.clientIp(c);
      const also = { key: `ip-wallets:${ip}`, tier: "identified" as const };
      return { key: `wallet:${address}@${ip}`, tier: "anonymous", also, scope: `wallet:${address}` };
    },
    counts,
  );
}

/** The quota of routes with no caller (the approval page's): keyed on the client's IP, anonymous. */
export function rateLimitIp(deps: RateLimitDeps): Middleware<QuotaVars> {
  return limitBy(deps, (c) => ({ key: `ip:${deps.clientIp(c)}`, tier: "anonymous" }));
}
