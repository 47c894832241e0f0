import { tool } from "ai";
import {
  type BudgetOutput,
  budgetInputSchema,
  type DiscoveredService,
  type DiscoverOutput,
  discoverInputSchema,
  type PayInput,
  type PayOutput,
  payInputSchema,
  type QuoteInput,
  type QuoteOutput,
  quoteInputSchema,
  TOOL_NAMES,
} from "../../../tools/contract.js";

/**
 * Test support: the four contract tools over a fake catalogue (weather, crypto, news, premium
 * report), with the real input schemas and outputs of the contract types. Records every call.
 * The per-transaction limit is $0.10, so the $0.50 premium report is refused at quote time.
 */

export const NETWORK = "eip155:31337";
export const TX_HASH = `0x${"ab".repeat(32)}`;
const ASSET = "0x5FbDB2315678afecb367f032d93F642f64180aa3";
const PAY_TO = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const BASE = "http://127.0.0.1:4021";

export const CATALOGUE: DiscoveredService[] = [
  {
    name: "Weather",
    description: "Current weather for a city (demo data)",
    url: `${BASE}/weather`,
    method: "GET",
    price: { usd: "0.01", atomic: "10000" },
    networks: [NETWORK],
    params: [{ name: "city", type: "string", description: "City name, e.g. Paris", required: true }],
  },
  {
    name: "Crypto Price",
    description: "Latest USD price of a crypto asset by ticker symbol",
    url: `${BASE}/crypto/price`,
    method: "GET",
    price: { usd: "0.02", atomic: "20000" },
    networks: [NETWORK, "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1"],
    params: [{ name: "symbol", type: "string", description: "Ticker symbol such as BTC", required: true }],
  },
  {
    name: "News",
    description: "Latest news headlines about a topic",
    url: `${BASE}/news`,
    method: "GET",
    price: { usd: "0.005", atomic: "5000" },
    networks: [NETWORK],
    params: [{ name: "topic", type: "string", description: "Topic to search", required: true }],
  },
  {
    name: "Premium Report",
    description: "An in-depth premium market research report",
    url: `${BASE}/premium/report`,
    method: "POST",
    price: { usd: "0.50", atomic: "500000" },
    networks: [NETWORK],
    params: [],
  },
];

const PER_TX = 100_000n;

function offerFor(service: DiscoveredService) {
  const price = service.price ?? { usd: "0", atomic: "0" };
  return {
    scheme: "exact",
    network: NETWORK,
    asset: ASSET,
    amountAtomic: price.atomic,
    amountUsd: price.usd,
    payTo: PAY_TO,
  };
}

export const LIMITS = {
  perTransaction: { limitUsd: "0.10", remainingUsd: "0.10" },
  perRequest: { limitUsd: "0.25", remainingUsd: "0.25" },
  daily: { limitUsd: "1.00", remainingUsd: "0.95" },
};

function bodyFor(service: DiscoveredService, input: PayInput): unknown {
  const q = input.query ?? {};
  switch (service.name) {
    case "Weather":
      return { city: q.city, temperatureC: 18, conditions: "Partly cloudy", demo: true };
    case "Crypto Price":
      return { symbol: q.symbol, priceUsd: "64123.45", source: "Demo Exchange", note: "demo data" };
    case "News":
      return {
        topic: q.topic,
        articles: [{ title: `${q.topic} model tops benchmark`, source: "Demo Wire" }],
      };
    default:
      return { title: "Premium report", pages: 12 };
  }
}

export interface FakeToolOptions {
  /** Replace pay_and_fetch's answer (e.g. a refusal). */
  pay?: (input: PayInput) => PayOutput;
  /** Replace get_quote's answer (e.g. a free service). */
  quote?: (input: QuoteInput) => QuoteOutput;
  /** Make discover_services throw this message. */
  discoverThrows?: string;
}

export interface ToolCallRecord {
  toolName: string;
  input: unknown;
}

/** The four tools and the list of calls they received. */
export function fakeTools(options: FakeToolOptions = {}) {
  const calls: ToolCallRecord[] = [];
  const find = (url: string) => CATALOGUE.find((s) => s.url === url);

  const tools = {
    [TOOL_NAMES.discover]: tool({
      description: "Find x402 services",
      inputSchema: discoverInputSchema,
      execute: async (input): Promise<DiscoverOutput> => {
        calls.push({ toolName: TOOL_NAMES.discover, input });
        if (options.discoverThrows) throw new Error(options.discoverThrows);
        return { services: CATALOGUE, errors: [] };
      },
    }),
    [TOOL_NAMES.quote]: tool({
      description: "Quote a service",
      inputSchema: quoteInputSchema,
      execute: async (input: QuoteInput): Promise<QuoteOutput> => {
        calls.push({ toolName: TOOL_NAMES.quote, input });
        if (options.quote) return options.quote(input);
        const service = find(input.url);
        if (!service) return { ok: false, error: { code: "not_found", message: "no such service" } };
        const offer = offerFor(service);
        const fits = BigInt(offer.amountAtomic) <= PER_TX;
        return {
          ok: true,
          url: input.url,
          paymentRequired: true,
          offers: [offer],
          chosen: fits ? offer : null,
          ...(fits
            ? {}
            : {
                refusal: {
                  code: "limit_exceeded",
                  message: "$0.50 exceeds the per-transaction limit of $0.10",
                },
              }),
          limits: LIMITS,
        };
      },
    }),
    [TOOL_NAMES.pay]: tool({
      description: "Pay and fetch",
      inputSchema: payInputSchema,
      execute: async (input: PayInput): Promise<PayOutput> => {
        calls.push({ toolName: TOOL_NAMES.pay, input });
        if (options.pay) return options.pay(input);
        const service = find(input.url);
        if (!service) return { status: "failed", error: { code: "not_found", message: "no such service" } };
        return {
          status: "paid",
          paymentId: "pay_1",
          amountUsd: service.price?.usd ?? "0",
          network: NETWORK,
          transaction: TX_HASH,
          payer: PAY_TO,
          data: {
            untrusted: true,
            contentType: "application/json",
            body: bodyFor(service, input),
            truncated: false,
          },
        };
      },
    }),
    [TOOL_NAMES.budget]: tool({
      description: "Budget",
      inputSchema: budgetInputSchema,
      execute: async (input): Promise<BudgetOutput> => {
        calls.push({ toolName: TOOL_NAMES.budget, input });
        return {
          wallet: PAY_TO,
          limits: {
            perTransactionUsd: "0.10",
            perRequestUsd: "0.25",
            dailyUsd: "1.00",
            allowedNetworks: [NETWORK],
            allowedServices: "any",
          },
          spentTodayUsd: "0.05",
          spentThisRequestUsd: "0",
          remainingTodayUsd: "0.95",
          balances: [{ network: NETWORK, asset: "USDC", usd: "10.00" }],
          canSign: true,
        };
      },
    }),
  };
  return { tools, calls };
}
