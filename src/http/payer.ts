import { AppError } from "../errors/index.js";
import { walletAllowed } from "../operator/index.js";
import type { Payer } from "../payments/face.js";
import type { PayerConfig } from "../protocol/index.js";
import type { AuthVars, Middleware, PayerVars, VarsContext } from "./vars.js";

/**
 * A key bound to wallets pays only from them, and opens tabs only for them: refused before anything
 * runs (docs/deploy.md#operating-it).
 */
export function checkKeyWallet(grant: AuthVars["grant"], address: string): void {
  if (grant?.wallets && !walletAllowed(grant.wallets, address))
    throw new AppError(
      "forbidden",
      `This API key may not pay from ${address}; it pays only from its own wallets.`,
      {
        details: { reason: "wallet_not_allowed", wallet: address },
      },
    );
}

/** Where a route's payer comes from beside the caller: its wallet and limits, and its scope. */
export type PayerSource<Reads extends object> = (vars: Readonly<AuthVars & Reads>) => {
  config: PayerConfig;
  scopeId: string;
  /** An MCP session: the caller's serving tab may pay (Payer.servedTabs). */
  servedTabs?: boolean;
};

/**
 * Builds the route's `Payer` once (docs/architecture.md#one-caller-context) and puts it on
 * `c.var.payer`: the bearer identity, token and grant from auth, the wallet and limits from the route's
 * own source (the chat request's body, an MCP session's headers) and the scope the per-request
 * limit counts within. Everything after it (the quota, idempotency, the turn, the tools, the
 * payments face, the ledger) reads this one object under these names.
 */
export function payer<Reads extends object>(
  source: PayerSource<Reads>,
): Middleware<PayerVars, AuthVars & Reads> {
  return async (c, next) => {
    const vars = c.var as Readonly<AuthVars & Reads>;
    const { config, scopeId, servedTabs } = source(vars);
    const { grant } = vars;
    if (config.wallet) checkKeyWallet(grant, config.wallet.address);
    const built: Payer = {
      caller: vars.caller,
      bearerToken: vars.bearerToken,
      wallet: config.wallet,
      spendingLimits: config.spendingLimits,
      ...(config.tab ? { tab: config.tab } : {}),
      scopeId,
      ...(servedTabs ? { servedTabs } : {}),
      ...(grant ? { grant } : {}),
    };
    (c as unknown as VarsContext<PayerVars>).set("payer", built);
    await next();
  };
}
