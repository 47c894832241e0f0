import type { DiscoverOutput } from "../../tools/contract.js";

/** A service's URL without its query: how discovery's names are looked up. */
export const baseOf = (url: string) => url.split("?")[0] ?? url;

/** How long the payment list waits for discovery's names (display only). */
const LISTED_NAMES_MS = 1_000;

/**
 * Discovery's names by URL (its cache), for payments whose row keeps none (a server key's: only an
 * approval stores the name). Display only: a search that takes over a second is given up (the
 * discovery cache stops waiting on its signal), and one that fails gives no names.
 */
export async function listedNames(discovery: {
  search(query: string | undefined, signal?: AbortSignal): Promise<DiscoverOutput>;
}): Promise<Map<string, string>> {
  const found = await discovery
    .search(undefined, AbortSignal.timeout(LISTED_NAMES_MS))
    .catch(() => undefined);
  return new Map((found?.services ?? []).map((service) => [baseOf(service.url), service.name]));
}
