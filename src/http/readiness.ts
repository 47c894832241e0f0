import { isAppError } from "../errors/index.js";

/**
 * Readiness (`GET /readyz`): can this process serve a paid chat now? Each dependency is checked
 * with one cheap call, bounded in time: the ledger's store, Redis when configured, and an RPC call
 * per configured network. `/healthz` stays liveness (the process answers), with no dependency calls.
 */

export type CheckKind = "store" | "redis" | "chain";

export interface ReadinessCheck {
  /** Stable and secret-free: "store", "redis", or a CAIP-2 network id (never an RPC URL). */
  name: string;
  kind: CheckKind;
  check(signal: AbortSignal): Promise<void>;
}

export interface CheckResult {
  name: string;
  kind: CheckKind;
  ok: boolean;
  /** Why it is down, in a few words; never a URL, a query or a key. */
  reason?: string;
  ms: number;
}

/** A failure whose message is safe to show (checks throw it with their own words). */
export class ReadinessError extends Error {
  override name = "ReadinessError";
}

export const READINESS_TIMEOUT_MS = 2000;

function reasonOf(error: unknown, signal: AbortSignal, timeoutMs: number): string {
  if (signal.aborted) return `no answer within ${timeoutMs} ms`;
  if (error instanceof ReadinessError || isAppError(error)) return error.message;
  const code = (error as { code?: unknown; cause?: { code?: unknown } } | null)?.code;
  const causeCode = (error as { cause?: { code?: unknown } } | null)?.cause?.code;
  const known = [code, causeCode].find((c): c is string => typeof c === "string" && /^[A-Z_]+$/.test(c));
  return known ? `unreachable (${known})` : "unreachable";
}

async function runCheck(check: ReadinessCheck, timeoutMs: number): Promise<CheckResult> {
  const started = performance.now();
  const signal = AbortSignal.timeout(timeoutMs);
  const result = (ok: boolean, reason?: string): CheckResult => ({
    name: check.name,
    kind: check.kind,
    ok,
    ...(reason ? { reason } : {}),
    ms: Math.round(performance.now() - started),
  });
  const timedOut = new Promise<never>((_, reject) => {
    signal.addEventListener("abort", () => reject(signal.reason), { once: true });
  });
  timedOut.catch(() => {});
  try {
    await Promise.race([check.check(signal), timedOut]);
    return result(true);
  } catch (error) {
    return result(false, reasonOf(error, signal, timeoutMs));
  }
}

/**
 * Run every check in parallel, each bounded by `timeoutMs`. Concurrent callers share one run, so
 * a burst of probes costs the dependencies one round of calls.
 */
export function createReadiness(
  checks: ReadinessCheck[],
  timeoutMs = READINESS_TIMEOUT_MS,
): () => Promise<CheckResult[]> {
  let running: Promise<CheckResult[]> | undefined;
  return () => {
    running ??= Promise.all(checks.map((c) => runCheck(c, timeoutMs))).finally(() => {
      running = undefined;
    });
    return running;
  };
}

/**
 * A chain check (one cheap RPC call, made by the network's chain family), its failure told in
 * safe words: the endpoint's HTTP status when it answered one, never its URL or error text.
 */
export function chainCheck(network: string, ping: (signal: AbortSignal) => Promise<void>): ReadinessCheck {
  return {
    name: network,
    kind: "chain",
    async check(signal) {
      try {
        await ping(signal);
      } catch (error) {
        const status = httpStatusOf(error);
        throw new ReadinessError(
          status ? `the RPC endpoint answered HTTP ${status}` : "the RPC endpoint did not answer",
        );
      }
    },
  };
}

/** An HTTP status carried by an RPC client's error or its causes (viem: `status`; @solana/kit: `context.statusCode`). */
function httpStatusOf(error: unknown): number | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 6 && current && typeof current === "object"; depth++) {
    const e = current as { status?: unknown; context?: { statusCode?: unknown }; cause?: unknown };
    for (const candidate of [e.status, e.context?.statusCode]) {
      if (typeof candidate === "number" && candidate >= 100 && candidate < 600) return candidate;
    }
    current = e.cause;
  }
  return undefined;
}

/**
 * Redis, through the rate limiter's own connection (`RateLimiter.ping`): the probe checks the
 * client the quota goes through, not a second one to the same URL. Its failure is told in safe
 * words (never the URL).
 */
export function redisCheck(ping: () => Promise<void>): ReadinessCheck {
  return {
    name: "redis",
    kind: "redis",
    async check() {
      try {
        await ping();
      } catch (error) {
        const code = (error as { code?: unknown } | null)?.code;
        throw new ReadinessError(
          typeof code === "string" && /^[A-Z_]+$/.test(code)
            ? `unreachable (${code})`
            : "Redis is not connected",
        );
      }
    },
  };
}
