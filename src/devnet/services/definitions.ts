import { cryptoPrice, news, premiumReport, sentiment, weather } from "./data.js";

/** A demo service: what it sells, for how much, and how it answers. */
export interface ServiceDefinition {
  id: string;
  name: string;
  description: string;
  path: string;
  method: "GET" | "POST";
  /** US dollars, decimal string. */
  priceUsd: string;
  tags: string[];
  /** Example input (query parameters for GET, JSON body for POST) and its JSON Schema. */
  input: {
    example: Record<string, string>;
    schema: { properties: Record<string, unknown>; required: string[] };
  };
  outputSchema: Record<string, unknown>;
  /** Produces the answer from the (validated) input. */
  handle(input: Record<string, string>): Record<string, unknown>;
}

const demoFields = { demo: { type: "boolean", const: true }, note: { type: "string" } };
const str = (description: string) => ({ type: "string", minLength: 1, maxLength: 200, description });

/**
 * The demo catalog. Prices are low except the premium report, which is deliberately above the
 * default $1.00 per-transaction limit so the spending-limit path has something to refuse.
 */
export const SERVICE_DEFINITIONS: readonly ServiceDefinition[] = [
  {
    id: "weather",
    name: "Weather now",
    description: "Current weather and a 3-day outlook for a city (simulated demo data).",
    path: "/weather",
    method: "GET",
    priceUsd: "0.01",
    tags: ["weather", "forecast"],
    input: {
      example: { city: "Lisbon" },
      schema: { properties: { city: str("City name") }, required: ["city"] },
    },
    outputSchema: {
      type: "object",
      properties: {
        city: { type: "string" },
        temperatureC: { type: "number" },
        conditions: { type: "string" },
        forecast: { type: "array" },
        ...demoFields,
      },
      required: ["city", "temperatureC", "conditions", "demo", "note"],
    },
    handle: (input) => weather(input.city ?? ""),
  },
  {
    id: "crypto-prices",
    name: "Crypto prices",
    description: "Spot price, 24h change and volume for a crypto asset symbol (simulated demo data).",
    path: "/crypto/price",
    method: "GET",
    priceUsd: "0.02",
    tags: ["crypto", "prices", "markets"],
    input: {
      example: { symbol: "ETH" },
      schema: { properties: { symbol: str("Asset ticker, e.g. BTC") }, required: ["symbol"] },
    },
    outputSchema: {
      type: "object",
      properties: {
        symbol: { type: "string" },
        priceUsd: { type: "number" },
        change24hPct: { type: "number" },
        ...demoFields,
      },
      required: ["symbol", "priceUsd", "demo", "note"],
    },
    handle: (input) => cryptoPrice(input.symbol ?? ""),
  },
  {
    id: "news",
    name: "News headlines",
    description: "Five latest headlines on a topic (simulated demo data).",
    path: "/news/headlines",
    method: "GET",
    priceUsd: "0.005",
    tags: ["news", "headlines"],
    input: {
      example: { topic: "energy" },
      schema: { properties: { topic: str("News topic") }, required: ["topic"] },
    },
    outputSchema: {
      type: "object",
      properties: { topic: { type: "string" }, headlines: { type: "array" }, ...demoFields },
      required: ["topic", "headlines", "demo", "note"],
    },
    handle: (input) => news(input.topic ?? ""),
  },
  {
    id: "sentiment",
    name: "Sentiment analysis",
    description: "Scores the sentiment of a text from -1 to 1 (simulated demo data). POST a JSON body.",
    path: "/sentiment",
    method: "POST",
    priceUsd: "0.003",
    tags: ["nlp", "sentiment"],
    input: {
      example: { text: "The new release is fantastic." },
      schema: { properties: { text: { type: "string", minLength: 1, maxLength: 5000 } }, required: ["text"] },
    },
    outputSchema: {
      type: "object",
      properties: { label: { type: "string" }, score: { type: "number" }, ...demoFields },
      required: ["label", "score", "demo", "note"],
    },
    handle: (input) => sentiment(input.text ?? ""),
  },
  {
    id: "premium-report",
    name: "Premium research report",
    description: "A long-form research report on a topic (simulated demo data). Priced above $1.",
    path: "/reports/premium",
    method: "GET",
    priceUsd: "2.50",
    tags: ["research", "report", "premium"],
    input: {
      example: { topic: "solar power" },
      schema: { properties: { topic: str("Report topic") }, required: ["topic"] },
    },
    outputSchema: {
      type: "object",
      properties: {
        topic: { type: "string" },
        title: { type: "string" },
        sections: { type: "array" },
        ...demoFields,
      },
      required: ["topic", "title", "sections", "demo", "note"],
    },
    handle: (input) => premiumReport(input.topic ?? ""),
  },
];

/** Converts a decimal dollar string to USDC atomic units (6 decimals) without floating point. */
export function usdToAtomic(usd: string): bigint {
  const match = /^(\d+)(?:\.(\d{1,6}))?$/.exec(usd);
  if (!match) throw new Error(`not a USD amount with at most 6 decimals: ${usd}`);
  const [, whole = "0", fraction = ""] = match;
  return BigInt(whole) * 1_000_000n + BigInt(fraction.padEnd(6, "0"));
}
