import type { Payer } from "../payments/face.js";
import type { PayerConfig } from "../protocol/index.js";
import type { AuthVars, Middleware, PayerVars, VarsContext } from "./vars.js";

/** Where a route's payer comes from beside the caller: its wallet and limits, and its scope. */
export type PayerSource<Reads extends object> = (vars: Readonly<AuthVars & Reads>) => {
  config: PayerConfig;
  scopeId: string;
};

/**
 * Builds the route's `Payer` once (docs/architecture.md#one-caller-context) and puts it on
 * `c.var.payer`: the bearer identity and token from auth, the wallet and limits from the route's
 * own source (the chat request's body, an MCP session's headers) and the scope the per-request
 * limit counts within. Everything after it (the quota, idempotency, the turn, the tools, the
 * payments face, the ledger) reads this one object under these names.
 */
export function payer<Reads extends object>(
  source: PayerSource<Reads>,
): Middleware<PayerVars, AuthVars & Reads> {
  return async (c, next) => {
    const vars = c.var as Readonly<AuthVars & Reads>;
    const { config, scopeId } = source(vars);
    const built: Payer = {
      caller: vars.caller,
      bearerToken: vars.bearerToken,
      wallet: config.wallet,
      spendingLimits: config.spendingLimits,
      scopeId,
    };
    (c as unknown as VarsContext<PayerVars>).set("payer", built);
    await next();
  };
}
