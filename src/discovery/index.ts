import type { DiscoveredService, DiscoverOutput } from "../tools/contract.js";
import { type DiscoveryFetch, readBazaar, usdAssetSet } from "./bazaar.js";
import { createCache } from "./cache.js";
import { readCatalog } from "./catalog.js";
import type { Entry, SourceResult } from "./entry.js";
import { rank } from "./search.js";

/**
 * x402 service discovery for the `discover_services` tool: reads every configured bazaar discovery
 * endpoint (bazaar.ts) plus an optional static catalog file (catalog.ts), merges them, caches the
 * result (cache.ts) and ranks it against a query (search.ts). What it returns is untrusted
 * third-party text, bounded and cleaned (entry.ts); the price shown is informational only.
 */

export type { DiscoveryFetch } from "./bazaar.js";

export interface DiscoveryOptions {
  /** Bazaar discovery endpoints, e.g. `https://facilitator.example/discovery/resources`. */
  urls: string[];
  /** Optional static catalog: a JSON array of entries (see `parseCatalog` in catalog.ts). */
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

const FAILING_CACHE_MS = 5_000;

/**
 * Builds the discovery port. Sources are read in parallel; one that fails is reported in `errors`
 * and the others are still returned. Bazaar entries come first (their prices are live), catalog
 * entries add what the bazaars do not list; the first entry for a URL wins.
 */
export function createDiscovery(options: DiscoveryOptions): Discovery {
  const cacheMs = options.cacheMs ?? 30_000;
  const pageSize = options.pageSize ?? 100;
  const usdAssets = usdAssetSet(options.usdAssets);

  async function refresh(): Promise<SourceResult> {
    const sources = options.urls.map((url) => readBazaar(url, options.fetch, pageSize, usdAssets));
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

  const snapshots = createCache({
    load: refresh,
    ttlMs: (value) => (value.errors.length > 0 ? Math.min(cacheMs, FAILING_CACHE_MS) : cacheMs),
    now: options.now ?? Date.now,
  });

  return {
    async search(query = "", signal) {
      const { entries, errors } = await snapshots.get(signal);
      return { services: rank(entries, query), errors: [...errors] };
    },
    async all(signal) {
      return (await snapshots.get(signal)).entries.map((e) => e.service);
    },
  };
}

function urlKey(url: string): string {
  try {
    return new URL(url).href;
  } catch {
    return url;
  }
}
