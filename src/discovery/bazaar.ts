import { z } from "zod/v4";
import { defaultUsdc } from "../chains/index.js";
import { isAppError } from "../errors/index.js";
import { formatUsd } from "../money/index.js";
import { isSafeFetchBlockedError, type SafeResponse } from "../outbound/index.js";
import { nestsAtMost } from "../protocol/index.js";
import type { DiscoveredService, ServiceParam } from "../tools/contract.js";
import {
  boundedExample,
  clean,
  describeIssues,
  type Entry,
  LIMITS,
  record,
  type SourceResult,
  sanitizeTags,
} from "./entry.js";

/**
 * Bazaar sources: `GET /discovery/resources` (the x402 v2 shape, v1 items too), read page by page
 * and mapped to `DiscoveredService`. The price shown is informational only: `get_quote` and the
 * payment policy decide what is paid (docs/payments.md, "The pipeline, step by step"). The
 * devnet serves one of these endpoints (docs/devnet.md, "Discovery").
 */

/** The part of `SafeFetch` discovery needs; production passes `createSafeFetch(...)`. */
export type DiscoveryFetch = (
  url: string,
  init?: { signal?: AbortSignal; headers?: Record<string, string> },
) => Promise<Pick<SafeResponse, "status" | "body" | "truncated">>;

const MAX_PAGES = 50;
/** How deep one listing may nest (its schemas and example sit a few levels in). */
const MAX_ITEM_DEPTH = 32;
const MAX_ITEMS_PER_SOURCE = 1_000;

/** The assets priced as 6-decimal USD: USDC on every network the x402 SDK knows (src/chains) plus `extra`. */
export function usdAssetSet(extra: string[] = []): Set<string> {
  return new Set([...Object.values(defaultUsdc()).flat(), ...extra].map(assetKey));
}

function assetKey(asset: string): string {
  return asset.startsWith("0x") ? asset.toLowerCase() : asset;
}

const acceptSchema = z.object({
  scheme: z.string().max(50).optional(),
  network: z.string().min(1).max(100),
  amount: z.string().max(80).optional(),
  maxAmountRequired: z.string().max(80).optional(),
  asset: z.string().max(200).optional(),
  extra: z.record(z.string(), z.unknown()).optional(),
  description: z.string().optional(),
  outputSchema: z.unknown().optional(),
});
type Accept = z.infer<typeof acceptSchema>;

const itemSchema = z.object({
  resource: z.url({ protocol: /^https?$/ }).max(2048),
  type: z.string().optional(),
  x402Version: z.number().int().optional(),
  accepts: z.array(acceptSchema).min(1).max(50),
  description: z.string().optional(),
  serviceName: z.string().optional(),
  tags: z.array(z.string().max(50)).optional(),
  extensions: z.record(z.string(), z.unknown()).optional(),
});
type Item = z.infer<typeof itemSchema>;

const pageSchema = z.object({
  items: z.array(z.unknown()),
  pagination: z.object({ total: z.number().int().nonnegative() }).optional(),
});

/**
 * Reads every page of one bazaar endpoint (`type=http`, `limit`, `offset`), bounded to
 * {@link MAX_PAGES} pages and {@link MAX_ITEMS_PER_SOURCE} items. Never throws: a failure is one
 * `errors` line (`url: reason`) next to the entries read before it; malformed items are skipped and
 * counted.
 */
export async function readBazaar(
  url: string,
  fetchPage: DiscoveryFetch,
  pageSize: number,
  usdAssets: Set<string>,
): Promise<SourceResult> {
  const entries: Entry[] = [];
  let skipped = 0;
  let firstProblem = "";
  try {
    let offset = 0;
    for (let page = 0; page < MAX_PAGES && offset < MAX_ITEMS_PER_SOURCE; page++) {
      const pageUrl = new URL(url);
      if (!pageUrl.searchParams.has("type")) pageUrl.searchParams.set("type", "http");
      pageUrl.searchParams.set("limit", String(pageSize));
      pageUrl.searchParams.set("offset", String(offset));
      const { items, pagination } = await readPage(pageUrl.href, fetchPage);
      for (const raw of items) {
        const type = record(raw)?.type;
        if (typeof type === "string" && type !== "http") continue; // MCP tools and the like: not callable here
        // A listing nested past any real one (an example thousands deep) would overflow whatever
        // walks it: that item is skipped, the source and its other items kept.
        if (!nestsAtMost(raw, MAX_ITEM_DEPTH)) {
          skipped++;
          firstProblem ||= `nested deeper than ${MAX_ITEM_DEPTH} levels`;
          continue;
        }
        const parsed = itemSchema.safeParse(raw);
        if (!parsed.success) {
          skipped++;
          firstProblem ||= describeIssues(parsed.error.issues)[0] ?? "";
          continue;
        }
        const service = toService(parsed.data, usdAssets);
        if (service) entries.push({ service, tags: sanitizeTags(parsed.data.tags) });
      }
      offset += items.length;
      if (items.length === 0 || !pagination || offset >= pagination.total) break;
    }
  } catch (error) {
    return { entries, errors: [`${url}: ${reasonOf(error)}`] };
  }
  const errors = skipped > 0 ? [`${url}: skipped ${skipped} malformed item(s) (${firstProblem})`] : [];
  return { entries, errors };
}

async function readPage(url: string, fetchPage: DiscoveryFetch): Promise<z.infer<typeof pageSchema>> {
  const response = await fetchPage(url, { headers: { accept: "application/json" } });
  if (response.status !== 200) throw new SourceError(`HTTP ${response.status}`);
  if (response.truncated) throw new SourceError("response too large");
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder().decode(response.body));
  } catch {
    throw new SourceError("response is not JSON");
  }
  const page = pageSchema.safeParse(json);
  if (!page.success)
    throw new SourceError(`not a discovery response (${describeIssues(page.error.issues)[0]})`);
  return page.data;
}

class SourceError extends Error {}

function reasonOf(error: unknown): string {
  if (error instanceof SourceError || isAppError(error)) return error.message;
  if (isSafeFetchBlockedError(error)) return `refused: ${error.message}`;
  if (error instanceof Error && error.name === "AbortError") return "aborted";
  return "could not be read";
}

/** Maps one v2 (or v1) bazaar item; null for items the tools cannot call (MCP, PUT, ...). */
function toService(item: Item, usdAssets: Set<string>): DiscoveredService | null {
  if (item.type !== undefined && item.type !== "http") return null;
  const v1 = item.x402Version === 1;
  const bazaar = record(item.extensions?.bazaar);
  const firstAccept = item.accepts[0];
  // v1 items carry their input description in accepts[].outputSchema instead of the extension.
  const input = record(record(bazaar?.info)?.input) ?? record(record(firstAccept?.outputSchema)?.input);
  const declared = typeof input?.method === "string" ? input.method.toUpperCase() : undefined;
  const method = declared ?? (input?.body !== undefined ? "POST" : "GET");
  if (method !== "GET" && method !== "POST") return null;

  const description = clean(item.description ?? firstAccept?.description ?? "", LIMITS.description);
  const schemaInput = record(record(record(record(bazaar?.schema)?.properties)?.input)?.properties);
  const location = method === "GET" ? "queryParams" : "body";
  const params =
    paramsFromSchema(record(schemaInput?.[location])) ?? paramsFromFields(record(input?.[location]), v1);
  const example = schemaInput && !v1 ? boundedExample(input?.[location]) : undefined;

  const service: DiscoveredService = {
    name: clean(item.serviceName ?? "", LIMITS.name) || nameFromUrl(item.resource),
    description,
    url: item.resource,
    method,
    price: cheapest(item.accepts, usdAssets),
    networks: [...new Set(item.accepts.map((a) => a.network))],
    params,
  };
  if (example !== undefined) service.example = example;
  return service;
}

function cheapest(accepts: Accept[], usdAssets: Set<string>): DiscoveredService["price"] {
  let best: bigint | null = null;
  for (const offer of accepts) {
    const amount = offer.amount ?? offer.maxAmountRequired;
    if (!amount || !/^\d{1,30}$/.test(amount) || !isUsdAsset(offer, usdAssets)) continue;
    const atomic = BigInt(amount);
    if (best === null || atomic < best) best = atomic;
  }
  return best === null ? null : { usd: formatUsd(best), atomic: best.toString() };
}

function isUsdAsset(offer: Accept, usdAssets: Set<string>): boolean {
  if (offer.asset && usdAssets.has(assetKey(offer.asset))) return true;
  const name = offer.extra?.name;
  const decimals = offer.extra?.decimals;
  return (
    typeof name === "string" && /^(usd coin|usdc)$/i.test(name) && (decimals === undefined || decimals === 6)
  );
}

/** Params from a JSON schema `{ properties, required }` (the bazaar extension's input schema). */
function paramsFromSchema(schema: Record<string, unknown> | undefined): ServiceParam[] | undefined {
  const properties = record(schema?.properties);
  if (!properties) return undefined;
  const required = Array.isArray(schema?.required)
    ? schema.required.filter((r) => typeof r === "string")
    : [];
  return Object.entries(properties)
    .slice(0, LIMITS.params)
    .map(([name, raw]) => param(name, record(raw), required.includes(name)));
}

/**
 * Params from a field map without a schema: v1 maps each name to a field definition (or to its
 * type name); v2 `info.input` maps each name to an example value.
 */
function paramsFromFields(fields: Record<string, unknown> | undefined, v1: boolean): ServiceParam[] {
  if (!fields) return [];
  return Object.entries(fields)
    .slice(0, LIMITS.params)
    .map(([name, value]) => {
      const definition = record(value);
      if (v1 && definition) return param(name, definition, definition.required === true);
      if (v1 && typeof value === "string")
        return { name: clean(name, LIMITS.name), type: clean(value, 30), required: false };
      return { name: clean(name, LIMITS.name), type: jsonType(value), required: false };
    });
}

function param(
  name: string,
  definition: Record<string, unknown> | undefined,
  required: boolean,
): ServiceParam {
  const rawType = definition?.type;
  const type = Array.isArray(rawType) ? rawType.filter((t) => typeof t === "string").join("|") : rawType;
  const result: ServiceParam = {
    name: clean(name, LIMITS.name),
    type: typeof type === "string" && type ? clean(type, 30) : "string",
    required,
  };
  if (typeof definition?.description === "string") {
    result.description = clean(definition.description, LIMITS.paramDescription);
  }
  return result;
}

function jsonType(value: unknown): string {
  if (Array.isArray(value)) return "array";
  if (value === null) return "null";
  return typeof value === "object" ? "object" : typeof value;
}

function nameFromUrl(url: string): string {
  const parsed = new URL(url);
  const words = parsed.pathname
    .split(/[/_\-.]+/)
    .filter(Boolean)
    .join(" ");
  return clean(words || parsed.hostname, LIMITS.name);
}
