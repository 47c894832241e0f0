import type {
  BudgetOutput,
  DiscoveredService,
  DiscoverOutput,
  LimitView,
  Offer,
  QuoteOutput,
  ServiceParam,
} from "../../tools/contract.js";
import { TOOL_NAMES } from "../../tools/contract.js";
import { network, oneLine, usd } from "./words.js";

export { approvedReply, payReply } from "./pay-replies.js";
export { usd } from "./words.js";

/**
 * The offline model's sentences (the answer after a payment: pay-replies.ts). Every figure comes
 * from a tool result passed in: these functions format, they never invent a price, a balance or a
 * transaction.
 */

const CAPABILITIES =
  "I'm an x402 payment agent. I can find paid x402 services, tell you what one would cost before paying, " +
  "pay for it within your spending limits and show you the result with its transaction hash, " +
  "and report your budget, spending and balances. (An x402 service answers HTTP 402 Payment Required " +
  "with its price; I pay it in USDC on chain, within your limits, and fetch the answer.) " +
  'Try "what services are available?", ' +
  '"how much is the weather service?", "what\'s the weather in Paris?" or "what is my budget?".';

/** The reply to greetings and anything the rules do not recognise. */
export function helpReply(toolsOffered: boolean): string {
  if (toolsOffered) return CAPABILITIES;
  return `${CAPABILITIES} ${NOT_CONFIGURED_TAIL}`;
}

const NOT_CONFIGURED_TAIL =
  "Right now, though, payments and service discovery are not configured on this server, so I can only talk.";

/** The reply when the tool an intent needs is not offered (payments not configured). */
export function notConfiguredReply(action: string): string {
  return (
    `I can't ${action} right now: payments and service discovery are not configured on this server. ` +
    "Once they are, I can find x402 services, quote their prices, pay within your spending limits " +
    "and report your budget. Meanwhile, ask me what x402 is or what I can do."
  );
}

export function batchReply(): string {
  return (
    "Batching several services into one transaction is not available yet (it's coming soon). " +
    "I can do them one at a time instead: each gets its own cost estimate, limit check and transaction. " +
    "Tell me the first one you want."
  );
}

/** A tool failed (threw, or its result was an error): say which and why, nothing more. */
export function toolErrorReply(toolName: string, message: string): string {
  return `The ${toolName} step failed: ${oneLine(message)}. ${paidClaim(toolName)} You can try again in a moment.`;
}

/**
 * Only the pay step can spend: for it the reply claims nothing it cannot know (its `p:` updates
 * say what happened to the payment); for the others nothing was paid.
 */
function paidClaim(toolName: string): string {
  return toolName === TOOL_NAMES.pay
    ? "Whether anything was paid is in the payment updates above; nothing will be paid again for it."
    : "Nothing was paid in that step.";
}

export function toolDeniedReply(toolName: string, reason: string): string {
  return `The ${toolName} step was not run: ${oneLine(reason)}. Nothing was paid.`;
}

export function unreadableReply(toolName: string): string {
  return `The ${toolName} step returned a result I can't read, so I won't guess. ${paidClaim(toolName)}`;
}

function priceText(service: DiscoveredService): string {
  return service.price ? usd(service.price.usd) : "price not listed";
}

function networksText(networks: readonly string[]): string {
  return networks.length > 0 ? networks.map(network).join(", ") : "network not listed";
}

/** The list of discovered services: name, price, networks. */
export function discoverReply(output: DiscoverOutput, query: string | undefined): string {
  const lines: string[] = [];
  const matching = query ? ` matching "${query}"` : "";
  if (output.services.length === 0) {
    lines.push(`I found no x402 services${matching}.`);
  } else {
    const count = output.services.length;
    lines.push(`I found ${count} x402 service${count === 1 ? "" : "s"}${matching}:`);
    for (const s of output.services) {
      lines.push(`- ${s.name}: ${priceText(s)} on ${networksText(s.networks)}. ${oneLine(s.description)}`);
    }
    lines.push("Ask me what one costs, or ask for its data and I'll quote it before paying.");
  }
  if (output.errors.length > 0)
    lines.push(`Some discovery sources could not be read: ${output.errors.join("; ")}.`);
  return lines.join("\n");
}

/** No discovered service matches the request. */
export function noMatchReply(output: DiscoverOutput, query: string | undefined): string {
  const what = query ? ` for "${query}"` : " for that";
  if (output.services.length === 0 && output.errors.length > 0) {
    return `I couldn't read the service directory, so I couldn't look for an x402 service${what}, and I didn't pay anything. Please try again shortly.`;
  }
  if (output.services.length === 0) {
    return `I couldn't find an x402 service${what}, so I didn't pay anything.`;
  }
  const names = output.services.map((s) => `${s.name} (${priceText(s)})`).join(", ");
  return `I couldn't find an x402 service${what}, so I didn't pay anything. Available services: ${names}.`;
}

export function missingParamReply(service: DiscoveredService, param: ServiceParam): string {
  const hint = param.description ? ` (${oneLine(param.description)})` : "";
  return `${service.name} needs a ${param.name}${hint}. Which ${param.name} should I use? Nothing was paid yet.`;
}

/** A cost question without the parameter a quote needs: the price discovery listed, and the question. */
export function listedPriceReply(service: DiscoveredService, param: ServiceParam): string {
  const listed = service.price
    ? `${service.name} lists ${priceText(service)} on ${networksText(service.networks)}.`
    : `${service.name} does not list a price.`;
  return `${listed} For an exact quote checked against your limits, tell me which ${param.name} you want.`;
}

function limitsText(limits: { perTransaction: LimitView; perRequest: LimitView; daily: LimitView }): string {
  const part = (label: string, view: LimitView) =>
    `${label} ${usd(view.limitUsd)} (remaining ${usd(view.remainingUsd)})`;
  // The per-payment cap is the most one payment may be, no budget that runs down.
  return `Your limits: ${usd(limits.perTransaction.limitUsd)} per payment, ${part("per request", limits.perRequest)}, ${part("daily", limits.daily)}.`;
}

function offerText(offer: Offer): string {
  // An asset other than a USDC the service pays with has no price in dollars here.
  const amount =
    offer.amountUsd !== undefined
      ? usd(offer.amountUsd)
      : /^[0-9]+$/.test(offer.amountAtomic)
        ? `${offer.amountAtomic} units of the token ${oneLine(offer.asset)} (not USDC)`
        : `an amount that is not a whole number of units ("${oneLine(offer.amountAtomic).slice(0, 40)}")`;
  return `${amount} on ${network(offer.network)}`;
}

/** The answer to "what would X cost": the price, where, what remains of each limit, or why not. */
export function costReply(service: DiscoveredService, quote: QuoteOutput): string {
  if (!quote.ok) return `I couldn't get a quote from ${service.name}: ${oneLine(quote.error.message)}.`;
  if (!quote.paymentRequired) {
    return `${service.name} did not ask for payment: it's free right now. ${limitsText(quote.limits)}`;
  }
  // The offer the reply names (the one paid, else the one a refusal says it asks): not "other".
  const named = quote.chosen ?? quote.wouldPay ?? quote.offers[0] ?? null;
  const others = quote.offers.filter((o) => o !== named && !sameOffer(o, named));
  const otherText = others.length > 0 ? ` Other offers: ${others.map(offerText).join(", ")}.` : "";
  if (!quote.chosen) {
    return `${refusalText(service, quote)}${otherText} ${limitsText(quote.limits)}`;
  }
  return `${service.name} costs ${offerText(quote.chosen)}; that is within your limits.${otherText} ${limitsText(quote.limits)}`;
}

function sameOffer(a: Offer, b: Offer | null): boolean {
  return b !== null && a.network === b.network && a.asset === b.asset && a.amountAtomic === b.amountAtomic;
}

/** Why the policy would not pay (quote with `chosen: null`). */
export function refusalText(service: DiscoveredService, quote: Extract<QuoteOutput, { ok: true }>): string {
  const offer = quote.wouldPay ?? quote.offers[0];
  const price = offer ? ` It asks ${offerText(offer)}.` : "";
  const why = quote.refusal
    ? `${oneLine(quote.refusal.message)} (${quote.refusal.code})`
    : "no offer fits your limits";
  return `I can't pay for ${service.name}: ${why}.${price}`;
}

/** The cost estimate shown before paying, in the same step as the pay_and_fetch call. */
export function estimateSentence(service: DiscoveredService, offer: Offer, needsApproval = false): string {
  return needsApproval
    ? `${service.name} costs ${offerText(offer)}; within your limits. The payment needs your approval in your wallet.`
    : `${service.name} costs ${offerText(offer)}; within your limits, paying now.`;
}

export function refusedQuoteReply(
  service: DiscoveredService,
  quote: Extract<QuoteOutput, { ok: true }>,
): string {
  return `${refusalText(service, quote)} I didn't pay anything. ${limitsText(quote.limits)}`;
}

/** The budget: limits, spent today, remaining, balances. */
export function budgetReply(budget: BudgetOutput): string {
  const { limits } = budget;
  const lines = [
    budget.wallet ? `Wallet: ${budget.wallet}.` : "No wallet is set for this conversation.",
    `Limits: ${usd(limits.perTransactionUsd)} per transaction, ${usd(limits.perRequestUsd)} per request, ${usd(limits.dailyUsd)} per day.`,
    `Spent today: ${usd(budget.spentTodayUsd)}; remaining today: ${usd(budget.remainingTodayUsd)}; spent in this request: ${usd(budget.spentThisRequestUsd)}.`,
    `Allowed networks: ${limits.allowedNetworks.length > 0 ? limits.allowedNetworks.map(network).join(", ") : "none"}; allowed services: ${
      limits.allowedServices === "any" ? "any" : limits.allowedServices.join(", ") || "none"
    }.`,
  ];
  if (budget.balances.length > 0) {
    lines.push(
      `Balances: ${budget.balances.map((b) => `${usd(b.usd)} ${b.asset} on ${network(b.network)}`).join(", ")}.`,
    );
  } else {
    lines.push("No balances are known.");
  }
  lines.push(
    budget.canSign
      ? "This server can sign payments for the wallet."
      : "This server cannot sign for the wallet.",
  );
  return lines.join("\n");
}

/** Why an ask of a message with several was not done (it follows "I didn't do ..."). */
export const TOO_MANY_ASKS = "I handle at most two paid requests per message; ask me again for it";
export const EARLIER_STEP_FAILED = "the step before it failed, so I stopped there; ask me again for it";
export const AWAITING_APPROVAL =
  "the payment before it is waiting for your approval; ask me again for it once you have answered in your wallet";

/** One ask of a message with several that was not started: which, and why. Nothing was paid for it. */
export function askNotDoneReply(askText: string, why: string): string {
  return `I didn't do "${oneLine(askText).replace(/[?!]+$/, "")}": ${why}. Nothing was paid for it.`;
}
