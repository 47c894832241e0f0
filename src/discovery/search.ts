import type { DiscoveredService } from "../tools/contract.js";
import type { Entry } from "./entry.js";

/**
 * Matching a query to services: keyword overlap, with light stemming, stopwords and a few everyday
 * synonyms, over each service's name, tags, URL path and description.
 */

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

/**
 * Ranks by weighted keyword overlap: name and tags count most, then URL path, then description.
 * Services matching no term are dropped; ties keep source order. A query of only stopwords (or
 * none) returns every service in source order.
 */
export function rank(entries: Entry[], query: string): DiscoveredService[] {
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
      const variants = [term, ...((Object.hasOwn(SYNONYMS, term) && SYNONYMS[term]) || [])];
      score += Math.max(0, ...fields.map(([set, weight]) => (variants.some((v) => set.has(v)) ? weight : 0)));
    }
    return { service, score, index };
  });
  return scored
    .filter((s) => s.score > 0)
    .sort((a, b) => b.score - a.score || a.index - b.index)
    .map((s) => s.service);
}

function words(text: string): string[] {
  return (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).map(stem);
}

function stem(word: string): string {
  if (word.length > 4 && word.endsWith("ies")) return `${word.slice(0, -3)}y`;
  if (word.length > 4 && word.endsWith("s") && !/(ss|us|is)$/.test(word)) return word.slice(0, -1);
  return word;
}

function safePath(url: string): string {
  try {
    return new URL(url).pathname;
  } catch {
    return "";
  }
}
