import {
  APPROVAL_CALL_PREFIX,
  type BudgetOutput,
  type DiscoveredService,
  type DiscoverOutput,
  type PayOutput,
  type QuoteOutput,
  TOOL_NAMES,
  type ToolName,
} from "../../tools/contract.js";
import { type Ask, bestService, classify, discoveryQuery, fillParams, splitAsks } from "./intents.js";
import type { ToolOutcome, TurnToolCall, TurnView } from "./prompt.js";
import * as reply from "./replies.js";

/** One model step: text to stream, then optionally one tool call (the loop runs it and calls again). */
export interface Step {
  text: string;
  toolCall?: { toolCallId: string; toolName: ToolName; input: Record<string, unknown> };
}

/** A turn never makes more tool calls than this, whatever the results say (per ask, when several). */
const MAX_CALLS_PER_TURN = 6;

/**
 * Paid asks handled in one message: each takes up to three model steps (discover, quote, pay) and the
 * agent allows `MAX_STEPS` (8 by default) per turn, so two fit with the answer. The rest are named as
 * not done.
 */
export const MAX_ASKS_PER_TURN = 2;

/**
 * Decide the next step of a turn from what the prompt holds: the intent of the last user message and
 * the tool results that already exist after it. Pure and deterministic.
 */
export function decideStep(view: TurnView): Step {
  // A payment the user answered in the wallet comes first in the turn, made on the client's
  // behalf (its call id says so): answer from its result, whatever the last message says.
  const resumed = view.calls[0];
  if (resumed?.toolName === TOOL_NAMES.pay && resumed.toolCallId.startsWith(APPROVAL_CALL_PREFIX)) {
    const value = resumed.outcome?.kind === "ok" ? resumed.outcome.value : undefined;
    return { text: isPay(value) ? reply.approvedReply(value) : reply.unreadableReply(TOOL_NAMES.pay) };
  }

  const asks = splitAsks(view.userText);
  if (asks) return severalAsksStep(view, asks);
  return askStep(view, classify(view.userText));
}

/** The calls made for ask `index` of a message with several: their ids carry it (`offline-<turn>-a<index>-…`). */
function callsOfAsk(view: TurnView, index: number): TurnView["calls"] {
  return view.calls.filter((c) => askIndexOf(c.toolCallId) === index);
}

function askIndexOf(toolCallId: string): number | undefined {
  const match = /^offline-\d+-a(\d+)-/.exec(toolCallId);
  return match ? Number(match[1]) : undefined;
}

/**
 * Several paid asks in one message ("the weather in Paris and the price of BTC"): each runs on its
 * own, one after the other (discover, quote, pay: its own `p:` updates, checked against the same
 * per-request budget, which then holds what the earlier ones spent). An ask's answer streams as the
 * next one starts; the last step answers the last ask and names every ask that was not done, and why.
 */
function severalAsksStep(view: TurnView, asks: readonly Ask[]): Step {
  const handled = asks.slice(0, MAX_ASKS_PER_TURN);
  let said = "";
  let stopped: string | undefined;
  const notDone: string[] = [];
  for (const [index, ask] of handled.entries()) {
    const calls = callsOfAsk(view, index);
    if (stopped !== undefined) {
      notDone.push(reply.askNotDoneReply(ask.text, stopped));
      continue;
    }
    const step = askStep({ ...view, userText: ask.text, calls }, ask.intent);
    if (step.toolCall) {
      const { toolName } = step.toolCall;
      const toolCall = {
        ...step.toolCall,
        toolCallId: `offline-${view.userTurn}-a${index}-${view.calls.length}-${toolName}`,
      };
      // The previous ask's answer streams as this one starts; later steps of this ask do not repeat it.
      const text = calls.length === 0 && said !== "" ? `${said}\n\n${step.text}` : step.text;
      return { text, toolCall };
    }
    said = step.text;
    stopped = stopReason(calls);
  }
  for (const ask of asks.slice(MAX_ASKS_PER_TURN)) {
    notDone.push(reply.askNotDoneReply(ask.text, reply.TOO_MANY_ASKS));
  }
  return { text: [said, ...notDone].join("\n\n") };
}

/**
 * Why the asks after this one are not started, if they are not: a step that failed (the next would
 * likely fail the same way) or a payment waiting for the user's wallet (one approval at a time).
 */
function stopReason(calls: TurnView["calls"]): string | undefined {
  const last = calls.at(-1);
  if (last?.outcome && last.outcome.kind !== "ok") return reply.EARLIER_STEP_FAILED;
  const value = last?.outcome?.kind === "ok" ? last.outcome.value : undefined;
  if (last?.toolName === TOOL_NAMES.pay && isPay(value) && value.status === "awaiting_approval")
    return reply.AWAITING_APPROVAL;
  return undefined;
}

/** One ask: the steps of its intent, from the calls made for it. */
function askStep(view: TurnView, intent: ReturnType<typeof classify>): Step {
  // A failed or denied tool ends the turn with an explanation, never with a retry.
  const last = view.calls.at(-1);
  if (last?.outcome && last.outcome.kind !== "ok")
    return { text: explainFailure(last.toolName, last.outcome) };
  if (view.calls.length >= MAX_CALLS_PER_TURN) {
    return {
      text: "I stopped here: this request needed more steps than I allow in one turn. Nothing more was paid.",
    };
  }

  switch (intent) {
    case "help":
      return { text: reply.helpReply(view.offered.size > 0) };
    case "batch":
      return { text: reply.batchReply() };
    case "budget":
      return budgetStep(view);
    case "discover":
      return discoverStep(view);
    case "cost":
    case "get":
      return serviceStep(view, intent);
  }
}

function explainFailure(toolName: string, outcome: Exclude<ToolOutcome, { kind: "ok" }>): string {
  return outcome.kind === "denied"
    ? reply.toolDeniedReply(toolName, outcome.message)
    : reply.toolErrorReply(toolName, outcome.message);
}

/** The latest result of a tool in this turn, if it ran. */
function resultOf(view: TurnView, name: ToolName): unknown {
  const call = [...view.calls].reverse().find((c) => c.toolName === name && c.outcome?.kind === "ok");
  return call?.outcome?.kind === "ok" ? call.outcome.value : undefined;
}

function hasCalled(view: TurnView, name: ToolName): boolean {
  return view.calls.some((c: TurnToolCall) => c.toolName === name);
}

/** Call `name` unless it was already called this turn (guards against loops) or is not offered. */
function call(view: TurnView, name: ToolName, input: Record<string, unknown>, text = ""): Step | undefined {
  if (!view.offered.has(name) || hasCalled(view, name)) return undefined;
  return {
    text,
    toolCall: { toolCallId: `offline-${view.userTurn}-${view.calls.length}-${name}`, toolName: name, input },
  };
}

function budgetStep(view: TurnView): Step {
  const budget = resultOf(view, TOOL_NAMES.budget);
  if (budget !== undefined) {
    return { text: isBudget(budget) ? reply.budgetReply(budget) : reply.unreadableReply(TOOL_NAMES.budget) };
  }
  return (
    call(view, TOOL_NAMES.budget, {}) ?? { text: reply.notConfiguredReply("show your budget and spending") }
  );
}

function discoverStep(view: TurnView): Step {
  const query = discoveryQuery(view.userText);
  const found = resultOf(view, TOOL_NAMES.discover);
  if (found !== undefined) {
    return {
      text: isDiscover(found)
        ? reply.discoverReply(found, query)
        : reply.unreadableReply(TOOL_NAMES.discover),
    };
  }
  return (
    call(view, TOOL_NAMES.discover, query ? { query } : {}) ?? {
      text: reply.notConfiguredReply("look up x402 services"),
    }
  );
}

/** cost: discover -> quote -> price; get: discover -> quote -> estimate + pay -> answer. */
function serviceStep(view: TurnView, intent: "cost" | "get"): Step {
  const action = intent === "cost" ? "quote a service" : "find and pay for services";
  const query = discoveryQuery(view.userText);

  const found = resultOf(view, TOOL_NAMES.discover);
  if (found === undefined) {
    return (
      call(view, TOOL_NAMES.discover, query ? { query } : {}) ?? { text: reply.notConfiguredReply(action) }
    );
  }
  if (!isDiscover(found)) return { text: reply.unreadableReply(TOOL_NAMES.discover) };
  const service = bestService(found.services, view.userText);
  if (!service) return { text: reply.noMatchReply(found, query) };
  const fill = fillParams(service, view.userText);
  if (!fill.ok) {
    const text =
      intent === "cost"
        ? reply.listedPriceReply(service, fill.missing)
        : reply.missingParamReply(service, fill.missing);
    return { text };
  }
  const target = targetOf(service, fill.values);

  const quoted = resultOf(view, TOOL_NAMES.quote);
  if (quoted === undefined) {
    return call(view, TOOL_NAMES.quote, target) ?? { text: reply.notConfiguredReply(action) };
  }
  if (!isQuote(quoted)) return { text: reply.unreadableReply(TOOL_NAMES.quote) };
  const quote = quoted;
  if (intent === "cost") return { text: reply.costReply(service, quote) };
  if (!quote.ok) return { text: reply.costReply(service, quote) };
  if (quote.paymentRequired && !quote.chosen) return { text: reply.refusedQuoteReply(service, quote) };

  const paid = resultOf(view, TOOL_NAMES.pay);
  if (paid === undefined) {
    const maxUsd = quote.chosen ? quote.chosen.amountUsd : "0";
    const estimate = quote.chosen
      ? reply.estimateSentence(service, quote.chosen, quote.needsApproval === true)
      : `${service.name} did not ask for payment; fetching it now.`;
    return (
      call(view, TOOL_NAMES.pay, { ...target, maxUsd }, `${estimate}\n\n`) ?? {
        text: `${reply.costReply(service, quote)} ${reply.notConfiguredReply("pay for it")}`,
      }
    );
  }
  return { text: isPay(paid) ? reply.payReply(service, paid) : reply.unreadableReply(TOOL_NAMES.pay) };
}

/** The HTTP target for quote and pay: parameters go in the query string (GET) or the JSON body (POST). */
function targetOf(service: DiscoveredService, values: Record<string, string>): Record<string, unknown> {
  const hasValues = Object.keys(values).length > 0;
  if (service.method === "POST")
    return { url: service.url, method: "POST", ...(hasValues ? { body: values } : {}) };
  return { url: service.url, method: "GET", ...(hasValues ? { query: values } : {}) };
}

// Light shape checks: a result that does not look like the contract is reported, not guessed at.
function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
function isDiscover(value: unknown): value is DiscoverOutput {
  return isObject(value) && Array.isArray(value.services) && Array.isArray(value.errors);
}
function isQuote(value: unknown): value is QuoteOutput {
  if (!isObject(value)) return false;
  if (value.ok === false) return isObject(value.error);
  return value.ok === true && Array.isArray(value.offers) && isObject(value.limits) && "chosen" in value;
}
function isPay(value: unknown): value is PayOutput {
  return isObject(value) && typeof value.status === "string";
}
function isBudget(value: unknown): value is BudgetOutput {
  return isObject(value) && isObject(value.limits) && Array.isArray(value.balances);
}
