import { Redis } from "ioredis";
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

/** One JSON-RPC call to a configured network: `eth_blockNumber` on EVM, `getSlot` on Solana. */
export function rpcCheck(network: string, url: string): ReadinessCheck {
  const method = network.startsWith("solana:") ? "getSlot" : "eth_blockNumber";
  return {
    name: network,
    kind: "chain",
    async check(signal) {
      const response = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params: [] }),
        redirect: "error",
        signal,
      });
      if (!response.ok) throw new ReadinessError(`the RPC endpoint answered HTTP ${response.status}`);
      const body = (await response.json().catch(() => undefined)) as { result?: unknown } | undefined;
      if (body?.result === undefined || body.result === null) {
        throw new ReadinessError(`the RPC endpoint did not answer ${method}`);
      }
    },
  };
}

/** PING on its own connection (the rate limiter's client hides its state); closed on shutdown. */
export function redisCheck(url: string): ReadinessCheck & { close(): void } {
  let client: Redis | undefined;
  return {
    name: "redis",
    kind: "redis",
    async check() {
      if (!client) {
        client = new Redis(url, {
          lazyConnect: true,
          enableOfflineQueue: false,
          maxRetriesPerRequest: 0,
          connectTimeout: READINESS_TIMEOUT_MS,
        });
        client.on("error", () => {});
      }
      if (client.status === "wait") await client.connect();
      const answer = await client.ping();
      if (answer !== "PONG") throw new ReadinessError("Redis did not answer PING");
    },
    close() {
      client?.disconnect();
    },
  };
}
