import { Redis } from "ioredis";
import { type Quota, quotaInMemory } from "./memory.js";
import { quotaInRedis } from "./redis.js";

/**
 * Request quota per caller (docs/protocol.md#limits: too-frequent requests get 429 and a cooldown).
 * Backed by memory by default, by Redis when configured so several processes share one quota.
 * If Redis is unreachable, the in-memory quota takes over rather than letting every request through.
 *
 * The rule, the same in both: a key has `points` requests in a window of `durationS` that starts
 * with its first request; the first request over them blocks the key for `blockS` from that
 * moment (every request meanwhile is refused, with the time left), and after the block the key
 * starts afresh. Two tiers of `points`: a caller the service knows (a bearer identity) gets
 * `points`, sized for agents; an anonymous one (keyed on a wallet it names, or its IP) gets
 * `anonymousPoints`, never more.
 */
export type QuotaTier = "identified" | "anonymous";

export interface RateLimiter {
  /** Count one request of `key` in its tier (default: anonymous, the tighter). */
  consume(key: string, tier?: QuotaTier): Promise<{ ok: true } | { ok: false; retryAfterS: number }>;
  /**
   * One PING on the limiter's own Redis connection (readiness: `GET /readyz`), so the probe sees
   * the connection the quota goes through; absent when the quota is kept in memory.
   */
  ping?(): Promise<void>;
  close(): Promise<void>;
}

export interface RateLimitOptions {
  /** Requests allowed per window to an identified caller. */
  points: number;
  /** Requests allowed per window to an anonymous caller (default and at most: `points`). */
  anonymousPoints?: number;
  /** Window length in seconds. */
  durationS: number;
  /** How long a key that went over stays blocked, in seconds (seed: 50; tests use a fraction). */
  blockS: number;
  redisUrl?: string;
  /** Key prefix in Redis; tests use their own to stay apart. */
  prefix?: string;
  /** The clock of the in-memory quota (the service's one clock); Redis keeps time by its own. */
  now?: () => number;
}

/** Each Redis command's bound: the server answers in about a millisecond when it is well. */
export const REDIS_COMMAND_TIMEOUT_MS = 250;

export function createRateLimiter(options: RateLimitOptions): RateLimiter {
  const rule = {
    points: options.points,
    windowMs: Math.round(options.durationS * 1000),
    blockMs: Math.round(options.blockS * 1000),
  };
  const tiers: Record<QuotaTier, number> = {
    identified: options.points,
    anonymous: Math.min(options.anonymousPoints ?? options.points, options.points),
  };
  const memory = quotaInMemory(rule, options.now ?? Date.now);
  const redis = options.redisUrl
    ? new Redis(options.redisUrl, {
        maxRetriesPerRequest: 1,
        connectTimeout: 2000,
        // A server that accepts but never answers (frozen, overloaded) must not hold the request.
        commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
        lazyConnect: true,
      })
    : undefined;
  // Connects on the first request, not while the service is wired. Connection errors are absorbed
  // by the in-memory quota; ioredis reconnects by itself.
  redis?.on("error", () => {});
  const quota: Quota = redis ? quotaInRedis(redis, rule, options.prefix ?? "chat-rl", memory) : memory;

  return {
    ...(redis ? { ping: () => ping(redis) } : {}),
    async consume(key, tier = "anonymous") {
      const left = await quota.consume(key, tiers[tier]);
      return left === 0 ? { ok: true } : { ok: false, retryAfterS: Math.max(1, Math.ceil(left / 1000)) };
    },
    async close() {
      if (redis) await redis.quit().catch(() => redis?.disconnect());
    },
  };
}

/**
 * PING without waiting in the offline queue: a client that never connected connects now (its
 * refusal is the answer); one that lost its connection and is reconnecting is down.
 */
async function ping(redis: Redis): Promise<void> {
  if (redis.status === "wait") await redis.connect();
  if (redis.status !== "ready") throw new Error(`Redis is ${redis.status}`);
  const answer = await redis.ping();
  if (answer !== "PONG") throw new Error("Redis did not answer PING");
}
