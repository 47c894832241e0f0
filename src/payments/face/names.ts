import type { DiscoverOutput } from "../../tools/contract.js";

/** A service's URL without its query: how discovery's names are looked up. */
export const baseOf = (url: string) => url.split("?")[0] ?? url;

/** How long the payment list waits for discovery's names (display only). */
const LISTED_NAMES_MS = 1_000;

/**
 * Discovery's names by URL (its cache), for payments whose row keeps none (a server key's: only an
 * approval stores the name). Display only: bounded to a second, and nothing when it fails.
 */
export async function listedNames(discovery: {
  search(query: string | undefined, signal?: AbortSignal): Promise<DiscoverOutput>;
}): Promise<Map<string, string>> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), LISTED_NAMES_MS);
  });
  try {
    const found = await Promise.race([
      discovery.search(undefined, AbortSignal.timeout(LISTED_NAMES_MS)).catch(() => undefined),
      late,
    ]);
    return new Map((found?.services ?? []).map((service) => [baseOf(service.url), service.name]));
  } finally {
    clearTimeout(timer);
  }
}
