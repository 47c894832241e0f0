/** What {@link createCache} loads, how long it keeps it, and its clock (a seam for tests). */
export interface CacheOptions<T> {
  load: () => Promise<T>;
  /** How long a freshly loaded value is reused, in ms; decided per value (e.g. shorter after errors). */
  ttlMs: (value: T) => number;
  now: () => number;
}

export interface Cache<T> {
  /** The cached value while fresh, else the load under way, else a new load. Rejects if `signal` aborts. */
  get(signal?: AbortSignal): Promise<T>;
}

/**
 * A value loaded at most once per time to live. Concurrent callers share one load, and that load
 * is not tied to any one caller's signal: a caller that aborts stops waiting, the load goes on for
 * the others and fills the cache.
 */
export function createCache<T>({ load, ttlMs, now }: CacheOptions<T>): Cache<T> {
  let cached: { at: number; ttl: number; value: T } | null = null;
  let inflight: Promise<T> | null = null;

  return {
    async get(signal) {
      signal?.throwIfAborted();
      if (cached && now() - cached.at < cached.ttl) return cached.value;
      if (!inflight) {
        inflight = load()
          .then((value) => {
            cached = { at: now(), ttl: ttlMs(value), value };
            return value;
          })
          .finally(() => {
            inflight = null;
          });
      }
      return abortable(inflight, signal);
    },
  };
}

function abortable<T>(promise: Promise<T>, signal?: AbortSignal): Promise<T> {
  if (!signal) return promise;
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}
