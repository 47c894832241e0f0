import { readFile } from "node:fs/promises";
import { basename } from "node:path";
import { z } from "zod/v4";
import { formatUsd, parseUsd } from "../money/index.js";
import type { DiscoveredService } from "../tools/contract.js";
import {
  boundedExample,
  clean,
  describeIssues,
  LIMITS,
  record,
  type SourceResult,
  sanitizeTags,
} from "./entry.js";

/**
 * The static catalog (`CATALOG_FILE`, README's configuration table): a JSON array of
 * {@link CatalogEntry}, for services no bazaar lists. Its entries come after the bazaars' (whose
 * prices are live), and only for URLs the bazaars do not list.
 */

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

/**
 * Reads and validates the catalog file. Never throws: an unreadable, non-JSON or invalid file is
 * reported in `errors` (prefixed `catalog <file name>`) with no entries, so the bazaars still answer.
 */
export async function readCatalog(file: string): Promise<SourceResult> {
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
