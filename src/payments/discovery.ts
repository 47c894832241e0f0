import { readFile } from "node:fs/promises";
import { basename } from "node:path";
import { z } from "zod/v4";
import { isAppError } from "../errors/index.js";
import { formatUsd, parseUsd } from "../money/index.js";
import { isSafeFetchBlockedError } from "../net/index.js";
import type { DiscoveredService, DiscoverOutput, ServiceParam } from "../tools/contract.js";

/**
 * Service discovery for the `discover_services` tool: reads every configured bazaar discovery
 * endpoint (`GET /discovery/resources`, x402 v2 shape, v1 items too) plus an optional static
 * catalog file, and turns them into the tool's `DiscoveredService` list.
 *
 * Everything read here is untrusted: names, descriptions and schemas come from third parties and
 * end up in the model's context. Strings are bounded and stripped of control characters, and the
 * price shown is informational only: `get_quote` and the payment policy decide what is paid.
 */

/** The part of `SafeFetch` discovery needs; production passes `createSafeFetch(...)`. */
export type DiscoveryFetch = (
  url: string,
  init?: { signal?: AbortSignal; headers?: Record<string, string> },
) => Promise<{ status: number; body: Uint8Array; truncated: boolean }>;

export interface DiscoveryOptions {
  /** Bazaar discovery endpoints, e.g. `https://facilitator.example/discovery/resources`. */
  urls: string[];
  /** Optional static catalog: a JSON array of entries (see {@link parseCatalog}). */
  catalogFile?: string;
  fetch: DiscoveryFetch;
  /** How long a result is reused. Default 30 s (5 s at most while a source is failing). */
  cacheMs?: number;
  /** Items asked per page. Default 100. */
  pageSize?: number;
  /**
   * Assets (EVM token addresses or Solana mints) priced as 6-decimal USD, on top of the known
   * USDC deployments and offers whose EIP-712 domain names USDC.
   */
  usdAssets?: string[];
  /** Clock seam for cache tests. */
  now?: () => number;
}

export interface Discovery {
  /** Services ranked by keyword overlap with `query`; every service when the query is empty. */
  search(query?: string, signal?: AbortSignal): Promise<DiscoverOutput>;
  /** Every service from every source, deduplicated by URL. */
  all(signal?: AbortSignal): Promise<DiscoveredService[]>;
}

const MAX_PAGES = 50;
const MAX_ITEMS_PER_SOURCE = 1_000;
const FAILING_CACHE_MS = 5_000;
const LIMITS = { name: 80, description: 500, paramDescription: 200, params: 30, example: 2_000, tags: 10 };

/** USDC deployments (6 decimals) x402 services commonly price in. EVM addresses lower-cased. */
const KNOWN_USDC = [
  "0x833589fcd6edb6e08f4c7c32d4f71b54bda02913", // Base
  "0x036cbd53842c5426634e7929541ec2318f3dcf7e", // Base Sepolia
  "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48", // Ethereum
  "0x1c7d4b196cb0c7b01d743fbc6116a902379c7238", // Sepolia
  "0x3c499c542cef5e3811e1192ce70d8cc03d5c3359", // Polygon
  "0xb97ef9ef8734c71904d8002f8b6bc66dd9c48a6e", // Avalanche
  "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v", // Solana
  "4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU", // Solana devnet
];

/** A discovered service plus the words it is found by. */
interface Entry {
  service: DiscoveredService;
  tags: string[];
}

interface Snapshot {
  entries: Entry[];
  errors: string[];
}

/**
 * Builds the discovery port. Sources are read in parallel; one that fails is reported in `errors`
 * and the others are still returned. Bazaar entries come first (their prices are live), catalog
 * entries add what the bazaars do not list; the first entry for a URL wins.
 */
export function createDiscovery(options: DiscoveryOptions): Discovery {
  const cacheMs = options.cacheMs ?? 30_000;
  const pageSize = options.pageSize ?? 100;
  const now = options.now ?? Date.now;
  const usdAssets = new Set([...KNOWN_USDC, ...(options.usdAssets ?? [])].map(assetKey));
  let cached: { at: number; ttl: number; value: Snapshot } | null = null;
  let inflight: Promise<Snapshot> | null = null;

  async function refresh(): Promise<Snapshot> {
    const sources = options.urls.map((url) => readSource(url, options.fetch, pageSize, usdAssets));
    const catalog = options.catalogFile ? readCatalog(options.catalogFile) : Promise.resolve(null);
    const [fromSources, fromCatalog] = await Promise.all([Promise.all(sources), catalog]);
    const seen = new Set<string>();
    const entries: Entry[] = [];
    const errors: string[] = [];
    for (const part of [...fromSources, ...(fromCatalog ? [fromCatalog] : [])]) {
      errors.push(...part.errors);
      for (const entry of part.entries) {
        const key = urlKey(entry.service.url);
        if (seen.has(key)) continue;
        seen.add(key);
        entries.push(entry);
      }
    }
    return { entries, errors };
  }

  async function snapshot(signal?: AbortSignal): Promise<Snapshot> {
    signal?.throwIfAborted();
    if (cached && now() - cached.at < cached.ttl) return cached.value;
    if (!inflight) {
      // Shared by concurrent callers, so it is not tied to any one caller's signal.
      inflight = refresh()
        .then((value) => {
          const ttl = value.errors.length > 0 ? Math.min(cacheMs, FAILING_CACHE_MS) : cacheMs;
          cached = { at: now(), ttl, value };
          return value;
        })
        .finally(() => {
          inflight = null;
        });
    }
    return abortable(inflight, signal);
  }

  return {
    async search(query = "", signal) {
      const { entries, errors } = await snapshot(signal);
      return { services: rank(entries, query), errors: [...errors] };
    },
    async all(signal) {
      return (await snapshot(signal)).entries.map((e) => e.service);
    },
  };
}

function abortable<T>(promise: Promise<T>, signal?: AbortSignal): Promise<T> {
  if (!signal) return promise;
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

function urlKey(url: string): string {
  try {
    return new URL(url).href;
  } catch {
    return url;
  }
}

function assetKey(asset: string): string {
  return asset.startsWith("0x") ? asset.toLowerCase() : asset;
}

// ---------------------------------------------------------------------------------------------
// Bazaar sources

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

async function readSource(
  url: string,
  fetchPage: DiscoveryFetch,
  pageSize: number,
  usdAssets: Set<string>,
): Promise<{ entries: Entry[]; errors: string[] }> {
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

function boundedExample(value: unknown): unknown {
  if (value === undefined) return undefined;
  const text = JSON.stringify(value);
  return text !== undefined && text.length <= LIMITS.example ? value : undefined;
}

function nameFromUrl(url: string): string {
  const parsed = new URL(url);
  const words = parsed.pathname
    .split(/[/_\-.]+/)
    .filter(Boolean)
    .join(" ");
  return clean(words || parsed.hostname, LIMITS.name);
}

function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

/** Collapses whitespace, drops control characters and bounds the length of third-party text. */
function clean(text: string, max: number): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: stripping control characters is the point
  const flat = text.replace(/[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u2028-\u202e\u2066-\u2069]/g, " ");
  const collapsed = flat.replace(/\s+/g, " ").trim();
  return collapsed.length > max ? `${collapsed.slice(0, max - 1)}…` : collapsed;
}

function sanitizeTags(tags: string[] | undefined): string[] {
  return (tags ?? []).slice(0, LIMITS.tags).map((t) => clean(t, 50));
}

function describeIssues(issues: readonly z.core.$ZodIssue[]): string[] {
  return issues.slice(0, 5).map((issue) => {
    const path = issue.path.map(String).join(".");
    return path ? `${path}: ${issue.message}` : issue.message;
  });
}

// ---------------------------------------------------------------------------------------------
// Static catalog

const usdText = z.string().refine((v) => parseUsd(v).ok, {
  message: 'must be a decimal USD amount with at most 6 decimals, e.g. "0.01"',
});
const atomicText = z
  .string()
  .regex(/^\d{1,30}$/, { message: 'must be atomic units (digits only), e.g. "10000"' });

const catalogEntrySchema = z
  .object({
    name: z.string().min(1).max(100),
    description: z.string().max(1_000).default(""),
    url: z.url({ protocol: /^https?$/, message: "must be an absolute http(s) URL" }).max(2048),
    method: z.enum(["GET", "POST"]).default("GET"),
    price: z
      .union([
        usdText,
        z.object({ usd: usdText.optional(), atomic: atomicText.optional() }).strict(),
        z.null(),
      ])
      .optional(),
    networks: z.array(z.string().min(1).max(100)).max(20).default([]),
    params: z
      .array(
        z
          .object({
            name: z.string().min(1).max(100),
            type: z.string().max(30).default("string"),
            description: z.string().max(500).optional(),
            required: z.boolean().default(false),
          })
          .strict(),
      )
      .max(LIMITS.params)
      .default([]),
    example: z.unknown().optional(),
    tags: z.array(z.string().max(50)).max(LIMITS.tags).optional(),
  })
  .strict()
  .superRefine((entry, ctx) => {
    const price = entry.price;
    if (typeof price !== "object" || price === null) return;
    if (price.usd === undefined && price.atomic === undefined) {
      ctx.addIssue({ code: "custom", path: ["price"], message: "needs usd or atomic" });
    }
    const usd = price.usd === undefined ? undefined : parseUsd(price.usd);
    if (usd?.ok && price.atomic !== undefined && usd.atomic !== BigInt(price.atomic)) {
      ctx.addIssue({ code: "custom", path: ["price"], message: "usd and atomic disagree" });
    }
  });

/** What a catalog file holds: a JSON array of these. `price` is a USD string, `{usd}`, `{atomic}` or null. */
export type CatalogEntry = z.input<typeof catalogEntrySchema>;

export type ParseCatalogResult =
  | { ok: true; services: DiscoveredService[] }
  | { ok: false; problems: string[] };

/**
 * Validates a static catalog (parsed JSON). Problems name the entry and field, e.g.
 * `entry 2 ("Weather"): url: must be an absolute http(s) URL`, so an operator can fix the file;
 * call it at startup to fail fast.
 */
export function parseCatalog(json: unknown): ParseCatalogResult {
  if (!Array.isArray(json)) return { ok: false, problems: ["must be a JSON array of services"] };
  const services: DiscoveredService[] = [];
  const problems: string[] = [];
  json.forEach((raw, index) => {
    const parsed = catalogEntrySchema.safeParse(raw);
    if (!parsed.success) {
      const name = typeof record(raw)?.name === "string" ? ` (${JSON.stringify(record(raw)?.name)})` : "";
      for (const issue of describeIssues(parsed.error.issues))
        problems.push(`entry ${index}${name}: ${issue}`);
      return;
    }
    services.push(catalogService(parsed.data));
  });
  return problems.length > 0 ? { ok: false, problems } : { ok: true, services };
}

function catalogService(entry: z.output<typeof catalogEntrySchema>): DiscoveredService {
  let atomic: bigint | null = null;
  if (typeof entry.price === "string") {
    const parsed = parseUsd(entry.price);
    if (parsed.ok) atomic = parsed.atomic;
  } else if (entry.price) {
    const parsed = entry.price.usd === undefined ? undefined : parseUsd(entry.price.usd);
    atomic =
      entry.price.atomic !== undefined ? BigInt(entry.price.atomic) : parsed?.ok ? parsed.atomic : null;
  }
  const service: DiscoveredService = {
    name: clean(entry.name, LIMITS.name),
    description: clean(entry.description, LIMITS.description),
    url: entry.url,
    method: entry.method,
    price: atomic === null ? null : { usd: formatUsd(atomic), atomic: atomic.toString() },
    networks: [...new Set(entry.networks)],
    params: entry.params.map((p) => ({ ...p, name: clean(p.name, LIMITS.name) })),
  };
  if (entry.example !== undefined) service.example = boundedExample(entry.example);
  return service;
}

async function readCatalog(file: string): Promise<{ entries: Entry[]; errors: string[] }> {
  const label = `catalog ${basename(file)}`;
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    return {
      entries: [],
      errors: [`${label}: cannot be read (${typeof code === "string" ? code : "error"})`],
    };
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { entries: [], errors: [`${label}: not valid JSON`] };
  }
  const result = parseCatalog(json);
  if (!result.ok) return { entries: [], errors: result.problems.map((p) => `${label}: ${p}`) };
  const tags = Array.isArray(json) ? json.map((raw) => record(raw)?.tags) : [];
  return {
    entries: result.services.map((service, i) => {
      const entryTags = tags[i];
      return { service, tags: Array.isArray(entryTags) ? sanitizeTags(entryTags.filter(isString)) : [] };
    }),
    errors: [],
  };
}

function isString(value: unknown): value is string {
  return typeof value === "string";
}

// ---------------------------------------------------------------------------------------------
// Search

const STOPWORDS = new Set(
  "a an and any are can could do does for from get give how i in is it me my need of on or please show some tell the to today what whats which with you".split(
    " ",
  ),
);

/** Everyday words for what the demo and common x402 services sell. */
const SYNONYMS: Record<string, string[]> = {
  bitcoin: ["crypto"],
  btc: ["crypto"],
  ethereum: ["crypto"],
  eth: ["crypto"],
  solana: ["crypto"],
  sol: ["crypto"],
  coin: ["crypto"],
  token: ["crypto"],
  cryptocurrency: ["crypto"],
  temperature: ["weather"],
  rain: ["weather"],
  forecast: ["weather"],
  headline: ["news"],
  article: ["news"],
  mood: ["sentiment"],
  report: ["research"],
};

function words(text: string): string[] {
  return (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).map(stem);
}

function stem(word: string): string {
  if (word.length > 4 && word.endsWith("ies")) return `${word.slice(0, -3)}y`;
  if (word.length > 4 && word.endsWith("s") && !/(ss|us|is)$/.test(word)) return word.slice(0, -1);
  return word;
}

/** Ranks by weighted keyword overlap: name and tags count most, then URL path, then description. */
function rank(entries: Entry[], query: string): DiscoveredService[] {
  const terms = [...new Set(words(query).filter((w) => !STOPWORDS.has(w)))];
  if (terms.length === 0) return entries.map((e) => e.service);
  const scored = entries.map((entry, index) => {
    const { service } = entry;
    const fields: Array<[Set<string>, number]> = [
      [new Set(words(service.name)), 3],
      [new Set(entry.tags.flatMap(words)), 3],
      [new Set(words(safePath(service.url))), 2],
      [new Set(words(service.description)), 1],
    ];
    let score = 0;
    for (const term of terms) {
      const variants = [term, ...(SYNONYMS[term] ?? [])];
      score += Math.max(0, ...fields.map(([set, weight]) => (variants.some((v) => set.has(v)) ? weight : 0)));
    }
    return { service, score, index };
  });
  return scored
    .filter((s) => s.score > 0)
    .sort((a, b) => b.score - a.score || a.index - b.index)
    .map((s) => s.service);
}

function safePath(url: string): string {
  try {
    return new URL(url).pathname;
  } catch {
    return "";
  }
}
