import { type Chains, sameAsset, walletCanUse } from "../../chains/index.js";
import { AppError } from "../../errors/index.js";
import { formatUsd } from "../../money/index.js";
import type { Wallet } from "../../protocol/index.js";
import type { BudgetOutput, Offer, QuoteInput, QuoteOutput } from "../../tools/contract.js";
import type { KeyGrant, SignerRegistry } from "../ports/index.js";
import {
  type ChosenOffer,
  type Committed,
  codeOf,
  dailyOf,
  type EffectiveLimits,
  isAtomicAmount,
  limitRemaining,
  type Requirement,
} from "../rules/index.js";
import type { PaymentPipeline, PaymentRequest } from "../run/index.js";

/** What the two reads of the face (`quote`, `budget`) need. */
export interface ReadDeps {
  pipeline: PaymentPipeline;
  chains: Pick<Chains, "balance">;
  signers: SignerRegistry;
  assets: Record<string, string[]>;
}

/** An offer as a caller reads it: in USD only when its asset is a USDC this service pays with. */
function offerView(assets: Record<string, string[]>) {
  return (r: Requirement): Offer => {
    const usdc =
      Object.hasOwn(assets, r.network) && assets[r.network]?.some((a) => sameAsset(r.network, a, r.asset));
    return {
      scheme: r.scheme,
      network: r.network,
      asset: r.asset,
      // As the service wrote it (a number too), and in USD only when admission would read it.
      amountAtomic: typeof r.amount === "string" ? r.amount : String(JSON.stringify(r.amount)),
      ...(usdc && isAtomicAmount(r.amount) ? { amountUsd: formatUsd(BigInt(r.amount)) } : {}),
      payTo: r.payTo,
    };
  };
}

/**
 * The price and what would remain of each limit; a refusal also goes to the observer (the turn
 * ends with its code). `payable`: the offer admission chose, when it may be paid.
 */
export async function quoteFor(
  deps: ReadDeps,
  request: PaymentRequest,
  input: QuoteInput,
): Promise<{ output: QuoteOutput; payable?: ChosenOffer }> {
  const result = await deps.pipeline.quote(request, input);
  if (result.kind === "refused") {
    // A forbidden origin ends the turn as `limit-exceeded`, an unreachable or failing service
    // as `service-unavailable`, quoted or not.
    const code = codeOf(result.reason);
    request.observer.error(
      new AppError(code, result.message, { details: { reason: result.reason, ...result.details } }),
    );
    return { output: { ok: false, error: { code, message: result.message } } };
  }
  const limits = deps.pipeline.limitsFor(request);
  const view = (limit: bigint, remaining: bigint) => ({
    limitUsd: formatUsd(limit),
    remainingUsd: formatUsd(remaining),
  });
  const committed = result.kind === "demand" ? result.remaining : { today: 0n, thisRequest: 0n };
  const remaining = limitRemaining(limits, committed);
  const base = {
    ok: true as const,
    url: result.url,
    limits: {
      perTransaction: view(limits.perTransaction, remaining.perTransaction),
      perRequest: view(limits.perRequest, remaining.perRequest),
      // The daily limit that binds: the wallet's, or the key's over all its wallets.
      daily: view(dailyOf(limits, committed).limit, remaining.daily),
    },
  };
  if (result.kind === "free")
    return { output: { ...base, paymentRequired: false, offers: [], chosen: null } };
  const toOffer = offerView(deps.assets);
  const offers = result.offers.map(toOffer);
  const admission = result.admission;
  if (!admission) {
    const refusal = { code: "no_wallet", message: "No wallet was given with this request." };
    return { output: { ...base, paymentRequired: true, offers, chosen: null, refusal } };
  }
  if (!admission.ok) {
    // This purchase is refused before any payment starts (a limit, no acceptable offer, a network
    // or wallet not allowed): say so on the stream, so the turn ends with the refusal's finish
    // reason (`limit-exceeded`, `payment-failed`...), not `stop`, as a refused payment would.
    request.observer.error(
      new AppError(codeOf(admission.reason), admission.message, {
        details: {
          ...admission.details,
          priceUsd: admission.chosen ? formatUsd(admission.chosen.amount) : undefined,
        },
      }),
    );
    const output: QuoteOutput = {
      ...base,
      paymentRequired: true,
      offers,
      chosen: null,
      ...(admission.chosen ? { wouldPay: toOffer(admission.chosen.offer) } : {}),
      refusal: { code: admission.reason, message: admission.message },
    };
    return { output };
  }
  const output: QuoteOutput = {
    ...base,
    paymentRequired: true,
    offers,
    chosen: toOffer(admission.offer),
    ...(result.needsApproval !== undefined ? { needsApproval: result.needsApproval } : {}),
  };
  return { output, payable: admission };
}

/** The limits, what is committed, what remains, and the wallet's balances. */
export async function budgetFor(
  deps: ReadDeps,
  request: PaymentRequest & { wallet?: Wallet },
): Promise<BudgetOutput> {
  const limits = deps.pipeline.limitsFor(request);
  const s = await deps.pipeline.committed(request);
  const remaining = limitRemaining(limits, s);
  const daily = dailyOf(limits, s);
  const balances: BudgetOutput["balances"] = [];
  const wallet = request.wallet;
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
      // The day that binds: the wallet's, or the key's over all its wallets (then spent and
      // remaining below are the key's too, and `key.dailyBinds` says so).
      dailyUsd: formatUsd(daily.limit),
      allowedNetworks: limits.allowedNetworks,
      allowedServices: limits.allowedServices,
    },
    spentTodayUsd: formatUsd(daily.byCaller ? (s.callerToday ?? s.today) : s.today),
    spentThisRequestUsd: formatUsd(s.thisRequest),
    remainingTodayUsd: formatUsd(remaining.daily),
    ...(request.grant ? { key: keyBudget(request.grant, limits, s, daily.byCaller) } : {}),
    balances,
    canSign: wallet ? await deps.signers.canSign(wallet, request) : false,
  };
}

/**
 * The caller's key as the budget shows it: its caps (each already bounds `limits`), and with a daily
 * cap what the key committed today over every wallet and what remains of it. `binds`: the key's
 * daily leaves less than the wallet's (the top-level `remainingTodayUsd` is then the key's).
 */
function keyBudget(
  grant: KeyGrant,
  limits: EffectiveLimits,
  committed: Committed,
  binds: boolean,
): NonNullable<BudgetOutput["key"]> {
  const usd = (cap: bigint | undefined) => (cap === undefined ? null : formatUsd(cap));
  const spent = committed.callerToday;
  const cap = limits.callerDaily;
  return {
    name: grant.name,
    perTransactionUsd: usd(grant.perTransaction),
    perRequestUsd: usd(grant.perRequest),
    dailyUsd: usd(grant.daily),
    wallets: grant.wallets ? [...grant.wallets] : null,
    ...(spent !== undefined && cap !== undefined
      ? {
          spentTodayUsd: formatUsd(spent),
          remainingTodayUsd: formatUsd(cap > spent ? cap - spent : 0n),
          dailyBinds: binds,
        }
      : {}),
  };
}
