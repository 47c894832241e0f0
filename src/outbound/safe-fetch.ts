import { AppError } from "../errors/index.js";
import { prepare, redirected, redirectTarget } from "./request.js";
import { SafeFetchBlockedError, type TargetPolicy, targetCheck } from "./targets.js";
import { fetchTransport, nodeTransport, type Transport } from "./transport.js";

/**
 * Server-side HTTP for everything the service fetches on someone else's say-so: discovery
 * endpoints, paid services, URLs a model proposes (docs/payments.md, "Server-side requests"). Only http(s),
 * only public addresses unless the operator allows more, every redirect hop re-checked, the whole
 * exchange bounded in time and the body bounded in size.
 *
 * DNS rebinding: with the default transport the connection is pinned to the addresses that were
 * checked. The host is resolved once, every address is classified, and the socket's `lookup` hook
 * hands exactly those addresses to `net.connect`, so a second, different DNS answer can never be
 * used. TLS still verifies the certificate against the host name. When a `fetch` is injected (tests,
 * or a custom agent), the check happens before the call but the injected fetch resolves the name
 * itself: a resolver that answers differently between the two lookups could slip through. Inject a
 * fetch only where that is acceptable.
 */

/** How a {@link SafeFetch} decides where it may go (targets.ts) and how much it takes. */
export interface SafeFetchPolicy extends TargetPolicy {
  /** Bound on the whole exchange: DNS, connect, every redirect hop and reading the body. */
  timeoutMs: number;
  /** Bytes of body kept; the rest is discarded and `truncated` is set. */
  maxBytes: number;
  /** Redirect hops followed before giving up. Default 3. */
  maxRedirects?: number;
  /** Transport override. Called with `redirect: "manual"`; see the DNS-rebinding note above. */
  fetch?: typeof fetch;
}

/** A fully read (or truncated) response. The body is bytes: decode it as the content type says. */
export interface SafeResponse {
  status: number;
  headers: Headers;
  /** The final URL, after redirects. */
  url: string;
  body: Uint8Array;
  /** True when the body was longer than `maxBytes` and was cut there. */
  truncated: boolean;
  /** The method of the final hop (a 301/302/303 redirect may have turned a POST into a GET). */
  method: string;
}

/**
 * Request options: those of `fetch`, plus per-call admission. `redirect: "manual"` returns a 3xx
 * instead of following it.
 */
export type SafeFetchInit = RequestInit & {
  signal?: AbortSignal;
  /**
   * Admission of every origin the call goes to: the first URL and each redirect hop, asked before
   * anything is sent there. A refused origin throws `SafeFetchBlockedError("origin_not_allowed")`.
   */
  allowOrigin?: (origin: string) => boolean;
  /** `false`: a redirect to another origin is not followed; the 3xx comes back as the response. */
  followCrossOrigin?: boolean;
};

export type SafeFetch = (url: string, init?: SafeFetchInit) => Promise<SafeResponse>;

/**
 * Builds the guarded fetch. One instance per policy; it keeps its own connection pool so sockets
 * opened under a looser policy are never reused under a stricter one.
 *
 * @example
 * const safeFetch = createSafeFetch({ allowPrivate: "none", timeoutMs: 10_000, maxBytes: 1 << 20 });
 * const res = await safeFetch("https://api.example.com/weather?city=Paris");
 */
export function createSafeFetch(policy: SafeFetchPolicy): SafeFetch {
  const check = targetCheck(policy);
  const maxRedirects = policy.maxRedirects ?? 3;
  const transport: Transport = policy.fetch ? fetchTransport(policy.fetch) : nodeTransport();

  return async function safeFetch(input: string, init: SafeFetchInit = {}): Promise<SafeResponse> {
    let url: URL;
    try {
      url = new URL(input);
    } catch {
      throw new SafeFetchBlockedError("invalid_url", "Not a valid absolute URL");
    }
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(), policy.timeoutMs);
    const signal = init.signal ? AbortSignal.any([init.signal, deadline.signal]) : deadline.signal;
    let request = await prepare(url, init).catch((cause: unknown) => {
      clearTimeout(timer);
      throw new AppError("internal", "Could not encode the request body", { cause });
    });
    try {
      for (let hop = 0; ; hop++) {
        if (init.allowOrigin && !init.allowOrigin(url.origin)) {
          throw new SafeFetchBlockedError("origin_not_allowed", `${url.origin} is not an allowed service`);
        }
        const pinned = await check(url);
        signal.throwIfAborted();
        const response = await transport(url, request, pinned, signal);
        const next = redirectTarget(response, url, init);
        if (next) {
          response.discard();
          if (init.redirect === "error") {
            throw new AppError(
              "service_unavailable",
              `${url.origin} redirected, and redirects were not allowed`,
            );
          }
          if (hop >= maxRedirects) {
            throw new SafeFetchBlockedError(
              "too_many_redirects",
              `More than ${maxRedirects} redirects from ${url.origin}`,
            );
          }
          request = redirected(request, response.status, next.origin !== url.origin);
          url = next;
          continue;
        }
        const { body, truncated } = await response.read(policy.maxBytes);
        return {
          status: response.status,
          headers: response.headers,
          url: url.href,
          body,
          truncated,
          method: request.method,
        };
      }
    } catch (cause) {
      throw failure(cause, url, {
        caller: init.signal,
        deadline: deadline.signal,
        timeoutMs: policy.timeoutMs,
      });
    } finally {
      clearTimeout(timer);
    }
  };
}

/**
 * What a failed call throws: a refusal or an AppError as it is; the caller's own abort as its
 * reason; anything else as `service_unavailable` naming the origin (never the full URL).
 */
function failure(
  cause: unknown,
  target: URL,
  {
    caller,
    deadline,
    timeoutMs,
  }: { caller: AbortSignal | undefined; deadline: AbortSignal; timeoutMs: number },
): unknown {
  if (cause instanceof SafeFetchBlockedError || cause instanceof AppError) return cause;
  if (caller?.aborted) return caller.reason;
  if (deadline.aborted) {
    return new AppError("service_unavailable", `${target.origin} did not answer within ${timeoutMs} ms`, {
      cause,
    });
  }
  return new AppError("service_unavailable", `Could not reach ${target.origin} (${errorCode(cause)})`, {
    cause,
  });
}

function errorCode(cause: unknown): string {
  let current: unknown = cause;
  for (let depth = 0; depth < 4 && current instanceof Error; depth++) {
    const code = (current as Error & { code?: unknown }).code;
    if (typeof code === "string" && /^[A-Z_]+$/.test(code)) return code;
    current = current.cause;
  }
  return "network error";
}
