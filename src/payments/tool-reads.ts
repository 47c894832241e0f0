import type { TurnContext } from "../agent/index.js";
import { type Chains, walletCanUse } from "../chains/index.js";
import { AppError } from "../errors/index.js";
import { formatUsd } from "../money/index.js";
import type { BudgetOutput, DiscoverOutput, Offer, QuoteInput, QuoteOutput } from "../tools/contract.js";
import type { SignerRegistry } from "./ports/index.js";
import { codeOf, limitRemaining, type Requirement } from "./rules/index.js";
import type { PaymentPipeline, PaymentRequest } from "./run/index.js";
import { buildTarget } from "./x402/index.js";

/**
 * The two payment tools that only read (`get_quote`, `get_budget`), as the model sees them; tools.ts
 * builds the four tools of a turn from these and `pay_and_fetch`.
 */

export interface ToolDeps {
  pipeline: PaymentPipeline;
  discovery: { search(query: string | undefined, signal?: AbortSignal): Promise<DiscoverOutput> };
  chains: Pick<Chains, "balance">;
  signers: SignerRegistry;
  assets: Record<string, string[]>;
}

const toOffer = (r: Requirement): Offer => ({
  scheme: r.scheme,
  network: r.network,
  asset: r.asset,
  amountAtomic: r.amount,
  amountUsd: /^[0-9]+$/.test(r.amount) ? formatUsd(BigInt(r.amount)) : "?",
  payTo: r.payTo,
});

/** `get_quote`: the price and what would remain of each limit; a refusal also goes on the stream. */
export async function quoteFor(
  deps: ToolDeps,
  ctx: TurnContext,
  request: PaymentRequest,
  quoted: Map<string, string>,
  input: QuoteInput,
): Promise<QuoteOutput> {
  const result = await deps.pipeline.quote(request, input);
  if (result.kind === "refused") {
    // A forbidden origin ends the turn as `limit-exceeded`, an unreachable or failing service
    // as `service-unavailable`, quoted or not.
    const code = codeOf(result.reason);
    ctx.reportError(
      new AppError(code, result.message, { details: { reason: result.reason, ...result.details } }),
    );
    return { ok: false, error: { code, message: result.message } };
  }
  const limits = deps.pipeline.limitsFor(request);
  const view = (limit: bigint, remaining: bigint) => ({
    limitUsd: formatUsd(limit),
    remainingUsd: formatUsd(remaining),
  });
  const remaining =
    result.kind === "demand"
      ? limitRemaining(limits, result.remaining)
      : limitRemaining(limits, { today: 0n, thisRequest: 0n });
  const base = {
    ok: true as const,
    url: result.url,
    limits: {
      perTransaction: view(limits.perTransaction, remaining.perTransaction),
      perRequest: view(limits.perRequest, remaining.perRequest),
      daily: view(limits.daily, remaining.daily),
    },
  };
  if (result.kind === "free") return { ...base, paymentRequired: false, offers: [], chosen: null };
  const offers = result.offers.map(toOffer);
  const admission = result.admission;
  if (!admission) {
    return {
      ...base,
      paymentRequired: true,
      offers,
      chosen: null,
      refusal: { code: "no_wallet", message: "No wallet was given with this request." },
    };
  }
  if (!admission.ok) {
    // A limit refuses this purchase before any payment starts: say so on the stream, so the
    // turn ends `limit-exceeded`, not `stop`.
    if (admission.reason === "limit_exceeded") {
      ctx.reportError(
        new AppError("limit_exceeded", admission.message, {
          details: {
            ...admission.details,
            priceUsd: admission.chosen ? formatUsd(admission.chosen.amount) : undefined,
          },
        }),
      );
    }
    return {
      ...base,
      paymentRequired: true,
      offers,
      chosen: null,
      ...(admission.chosen ? { wouldPay: toOffer(admission.chosen.offer) } : {}),
      refusal: { code: admission.reason, message: admission.message },
    };
  }
  const chosen = toOffer(admission.offer);
  quoted.set(JSON.stringify(buildTarget(input)), chosen.amountUsd);
  return {
    ...base,
    paymentRequired: true,
    offers,
    chosen,
    ...(result.needsApproval !== undefined ? { needsApproval: result.needsApproval } : {}),
  };
}

/** `get_budget`: the limits, what is committed, what remains, and the wallet's balances. */
export async function budgetFor(
  deps: ToolDeps,
  ctx: TurnContext,
  request: PaymentRequest,
): Promise<BudgetOutput> {
  const limits = deps.pipeline.limitsFor(request);
  const s = await deps.pipeline.committed(request);
  const remaining = limitRemaining(limits, s);
  const balances: BudgetOutput["balances"] = [];
  const wallet = ctx.wallet;
  if (wallet) {
    for (const network of limits.allowedNetworks.filter((n) => walletCanUse(wallet.chain, n))) {
      const asset = deps.assets[network]?.[0];
      if (!asset) continue;
      const amount = await deps.chains.balance(network, asset, wallet.address).catch(() => undefined);
      if (amount !== undefined) balances.push({ network, asset: "USDC", usd: formatUsd(amount) });
    }
  }
  return {
    wallet: wallet?.address ?? null,
    limits: {
      perTransactionUsd: formatUsd(limits.perTransaction),
      perRequestUsd: formatUsd(limits.perRequest),
      dailyUsd: formatUsd(limits.daily),
      allowedNetworks: limits.allowedNetworks,
      allowedServices: limits.allowedServices,
    },
    spentTodayUsd: formatUsd(s.today),
    spentThisRequestUsd: formatUsd(s.thisRequest),
    remainingTodayUsd: formatUsd(remaining.daily),
    balances,
    canSign: wallet ? await deps.signers.canSign(wallet, ctx.bearerToken) : false,
  };
}
