import type { PaymentRequired, PaymentRequirements } from "@x402/core/types";

/** One bazaar discovery item, in the v2 `GET /discovery/resources` shape. */
export interface DiscoveryItem {
  resource: string;
  type: "http";
  x402Version: number;
  accepts: PaymentRequirements[];
  lastUpdated: string;
  description?: string;
  mimeType?: string;
  serviceName?: string;
  tags?: string[];
  extensions?: Record<string, unknown>;
}

/** Query of `GET /discovery/resources`; all optional. */
export interface DiscoveryQuery {
  type?: string;
  network?: string;
  scheme?: string;
  payTo?: string;
  limit: number;
  offset: number;
}

export const DEFAULT_PAGE_LIMIT = 20;
export const MAX_PAGE_LIMIT = 100;

/**
 * The facilitator's bazaar catalog. Seeded at start from each demo service's real 402 answer,
 * so clients can discover services before anyone has paid (the reference facilitator lists a
 * resource only after its first settlement). Insertion order is listing order.
 */
export class DiscoveryCatalog {
  private readonly items = new Map<string, DiscoveryItem>();

  /** Adds or replaces a resource from the `PAYMENT-REQUIRED` body its server sends. */
  upsertFromPaymentRequired(paymentRequired: PaymentRequired, now = new Date()): void {
    const { resource } = paymentRequired;
    this.items.set(resource.url, {
      resource: resource.url,
      type: "http",
      x402Version: paymentRequired.x402Version,
      accepts: paymentRequired.accepts,
      lastUpdated: now.toISOString(),
      ...(resource.description ? { description: resource.description } : {}),
      ...(resource.mimeType ? { mimeType: resource.mimeType } : {}),
      ...(resource.serviceName ? { serviceName: resource.serviceName } : {}),
      ...(resource.tags ? { tags: resource.tags } : {}),
      ...(paymentRequired.extensions ? { extensions: paymentRequired.extensions } : {}),
    });
  }

  /** Marks a resource as recently paid for (after a settlement through this facilitator). */
  touch(resourceUrl: string, now = new Date()): void {
    const item = this.items.get(resourceUrl);
    if (item) item.lastUpdated = now.toISOString();
  }

  list(query: DiscoveryQuery) {
    const matches = [...this.items.values()].filter(
      (item) =>
        (!query.type || item.type === query.type) &&
        item.accepts.some(
          (a) =>
            (!query.network || a.network === query.network) &&
            (!query.scheme || a.scheme === query.scheme) &&
            (!query.payTo || a.payTo === query.payTo),
        ),
    );
    return {
      x402Version: 2,
      items: matches.slice(query.offset, query.offset + query.limit),
      pagination: { limit: query.limit, offset: query.offset, total: matches.length },
    };
  }
}

/** Parses the query string of a discovery request; throws a message for a 400 on bad paging. */
export function parseDiscoveryQuery(params: URLSearchParams): DiscoveryQuery {
  const int = (name: string, fallback: number, max: number): number => {
    const raw = params.get(name);
    if (raw === null || raw === "") return fallback;
    if (!/^\d+$/.test(raw)) throw new Error(`${name} must be a non-negative integer`);
    return Math.min(Number(raw), max);
  };
  const optional = (name: string) => params.get(name) || undefined;
  const query: DiscoveryQuery = {
    limit: int("limit", DEFAULT_PAGE_LIMIT, MAX_PAGE_LIMIT),
    offset: int("offset", 0, Number.MAX_SAFE_INTEGER),
  };
  for (const key of ["type", "network", "scheme", "payTo"] as const) {
    const value = optional(key);
    if (value) query[key] = value;
  }
  return query;
}
