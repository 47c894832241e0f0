/** The quota's rule in milliseconds (src/ratelimit/rate-limit.ts says what it means). */
export interface QuotaRule {
  points: number;
  windowMs: number;
  blockMs: number;
}

/**
 * One quota store: 0 when the request may go, else how many ms until the key is free again.
 * `points` overrides the rule's for this key (a tier: src/ratelimit/rate-limit.ts); a key is
 * always consumed with the same points.
 */
export interface Quota {
  consume(key: string, points?: number): Promise<number>;
}

/**
 * Keys kept at most. Any client can name a new wallet, so the map is bounded: expired keys are
 * swept as it grows, and past this many the oldest go first (a key that loses its count this way
 * could as well have come back under a new name).
 */
export const MAX_KEYS = 100_000;

interface Entry {
  count: number;
  /** When the window, or the block once the key went over, ends. */
  endsAt: number;
}

/** The quota in this process, on the given clock (ms since the epoch). */
export function quotaInMemory(
  rule: QuotaRule,
  now: () => number,
  maxKeys = MAX_KEYS,
): Quota & { size(): number } {
  const keys = new Map<string, Entry>();
  let sweepAt = Math.min(1024, maxKeys);

  /** Drops expired keys and, at the bound, the oldest tenth: a sweep's cost is spread over many requests. */
  function sweep(t: number): void {
    for (const [key, entry] of keys) if (entry.endsAt <= t) keys.delete(key);
    const keep = Math.floor(maxKeys * 0.9);
    for (const key of keys.keys()) {
      if (keys.size <= keep) break;
      keys.delete(key);
    }
    sweepAt = Math.min(Math.max(1024, keys.size * 2), maxKeys);
  }

  return {
    size: () => keys.size,
    async consume(key, points = rule.points) {
      const t = now();
      let entry = keys.get(key);
      if (!entry || entry.endsAt <= t) {
        if (entry) keys.delete(key);
        if (keys.size >= sweepAt) sweep(t);
        entry = { count: 0, endsAt: t + rule.windowMs };
        keys.set(key, entry);
      }
      entry.count += 1;
      if (entry.count <= points) return 0;
      if (entry.count === points + 1) entry.endsAt = t + rule.blockMs;
      return Math.max(1, entry.endsAt - t);
    },
  };
}
