import { Redis } from "ioredis";
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from "rate-limiter-flexible";

/**
 * Request quota per caller (seed section 7/8: too-frequent requests get 429 and a 50 s cooldown).
 * Backed by memory by default, by Redis when configured so several processes share one quota.
 * If Redis is unreachable, an in-memory limiter takes over rather than letting every request through.
 */
export interface RateLimiter {
  consume(key: string): Promise<{ ok: true } | { ok: false; retryAfterS: number }>;
  /**
   * One PING on the limiter's own Redis connection (readiness: `GET /readyz`), so the probe sees
   * the connection the quota goes through; absent when the quota is kept in memory.
   */
  ping?(): Promise<void>;
  close(): Promise<void>;
}

export interface RateLimitOptions {
  /** Requests allowed per window. */
  points: number;
  /** Window length in seconds. */
  durationS: number;
  /** How long a key that went over stays blocked, in seconds (seed: 50). */
  blockS: number;
  redisUrl?: string;
  /** Key prefix in Redis; tests use their own to stay apart. */
  prefix?: string;
}

export function createRateLimiter(options: RateLimitOptions): RateLimiter {
  const base = {
    points: options.points,
    duration: options.durationS,
    blockDuration: options.blockS,
    keyPrefix: options.prefix ?? "chat-rl",
  };
  const memory = new RateLimiterMemory(base);
  const redis = options.redisUrl
    ? new Redis(options.redisUrl, { maxRetriesPerRequest: 1, connectTimeout: 2000, lazyConnect: true })
    : undefined;
  // Connects on the first request, not while the service is wired. Connection errors are absorbed
  // by the insurance limiter; ioredis reconnects by itself.
  redis?.on("error", () => {});
  const limiter = redis
    ? new RateLimiterRedis({ ...base, storeClient: redis, insuranceLimiter: memory })
    : memory;

  return {
    ...(redis ? { ping: () => ping(redis) } : {}),
    async consume(key) {
      try {
        await limiter.consume(key);
        return { ok: true };
      } catch (err) {
        if (err instanceof RateLimiterRes) {
          return { ok: false, retryAfterS: Math.max(1, Math.ceil(err.msBeforeNext / 1000)) };
        }
        throw err;
      }
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
