import type { Redis } from "ioredis";
import type { Quota, QuotaRule } from "./memory.js";

/**
 * The rule as one script, so processes sharing the server count each request once and see the
 * same block: the first request starts the window, the first one over it sets the block as the
 * key's expiry; the answer is the count and the time left (Redis's own clock).
 */
const CONSUME = `
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
if n == tonumber(ARGV[2]) + 1 then redis.call('PEXPIRE', KEYS[1], ARGV[3]) end
return {n, redis.call('PTTL', KEYS[1])}
`;

/**
 * How long a Redis that failed or did not answer (its client's `commandTimeout`) is left alone
 * before it is asked again: a frozen server then costs one wait per interval, not one per request.
 */
export const REDIS_RETRY_AFTER_MS = 2_000;

/**
 * The quota on a Redis server shared by every process of the service; while Redis cannot answer
 * (down, or frozen: its client bounds each command in time), `fallback` (this process's own quota)
 * decides, so an outage neither refuses nor lets through everyone, nor holds requests.
 */
export function quotaInRedis(
  redis: Redis,
  rule: QuotaRule,
  prefix: string,
  fallback: Quota,
  now: () => number = Date.now,
): Quota {
  let resting = Number.NEGATIVE_INFINITY;
  return {
    async consume(key, points = rule.points) {
      if (now() - resting < REDIS_RETRY_AFTER_MS) return fallback.consume(key, points);
      let answer: unknown;
      try {
        answer = await redis.eval(CONSUME, 1, `${prefix}:${key}`, rule.windowMs, points, rule.blockMs);
      } catch {
        resting = now();
        return fallback.consume(key, points);
      }
      const [count, ttl] = Array.isArray(answer) ? answer.map(Number) : [];
      if (count === undefined || ttl === undefined || Number.isNaN(count))
        return fallback.consume(key, points);
      if (count <= points) return 0;
      // A key without an expiry (-1) or gone (-2) cannot be waited out: say the whole block.
      return ttl > 0 ? ttl : Math.max(1, rule.blockMs);
    },
  };
}
