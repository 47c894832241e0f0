import { lookup as dnsLookup } from "node:dns/promises";
import { isIP } from "node:net";
import { AppError } from "../errors/index.js";
import { type AddressClass, classifyAddress } from "./address.js";
import {
  fetchTransport,
  nodeTransport,
  type PreparedRequest,
  type RawResponse,
  type Transport,
} from "./transport.js";

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

/** How a {@link SafeFetch} decides where it may go. */
export interface SafeFetchPolicy {
  /** `"none"`: public unicast addresses only. `"all"`: no address check (local development only). */
  allowPrivate: "none" | "all";
  /** Origins (`http://127.0.0.1:4021`) allowed even when they resolve to private or loopback addresses. */
  allowOrigins?: string[];
  /** Bound on the whole exchange: DNS, connect, every redirect hop and reading the body. */
  timeoutMs: number;
  /** Bytes of body kept; the rest is discarded and `truncated` is set. */
  maxBytes: number;
  /** Redirect hops followed before giving up. Default 3. */
  maxRedirects?: number;
  /** Transport override. Called with `redirect: "manual"`; see the DNS-rebinding note above. */
  fetch?: typeof fetch;
  /** DNS override: every address the host resolves to. Default `dns.lookup(host, { all: true })`. */
  lookup?: (host: string) => Promise<string[]>;
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

/** Stable, snake_case reasons a target was refused. */
export type BlockedReason =
  | "invalid_url"
  | "unsupported_scheme"
  | "credentials_in_url"
  | "blocked_address"
  | "origin_not_allowed"
  | "too_many_redirects";

/**
 * The target was refused by policy before (or instead of) sending anything there. Not an
 * `AppError`: whether it means "service unavailable" or "payment refused" is the caller's call.
 * The message names the host and the kind of address, never the full URL (it may carry user data).
 */
export class SafeFetchBlockedError extends Error {
  readonly reason: BlockedReason;
  /** For `blocked_address`: what kind of address (loopback, private, ...). */
  readonly addressClass: AddressClass | undefined;

  constructor(reason: BlockedReason, message: string, addressClass?: AddressClass) {
    super(message);
    this.name = "SafeFetchBlockedError";
    this.reason = reason;
    this.addressClass = addressClass;
  }
}

export function isSafeFetchBlockedError(value: unknown): value is SafeFetchBlockedError {
  return value instanceof SafeFetchBlockedError;
}

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
/** Dropped when a redirect leaves the origin, as browsers drop Authorization: they are meant for one service. */
const ORIGIN_BOUND_HEADERS = [
  "authorization",
  "cookie",
  "proxy-authorization",
  "payment-signature",
  "x-payment",
];

/**
 * Builds the guarded fetch. One instance per policy; it keeps its own connection pool so sockets
 * opened under a looser policy are never reused under a stricter one.
 *
 * @example
 * const safeFetch = createSafeFetch({ allowPrivate: "none", timeoutMs: 10_000, maxBytes: 1 << 20 });
 * const res = await safeFetch("https://api.example.com/weather?city=Paris");
 */
export function createSafeFetch(policy: SafeFetchPolicy): SafeFetch {
  const allowOrigins = new Set((policy.allowOrigins ?? []).map(originOf));
  const maxRedirects = policy.maxRedirects ?? 3;
  const resolve = policy.lookup ?? defaultLookup;
  const transport: Transport = policy.fetch ? fetchTransport(policy.fetch) : nodeTransport();

  /**
   * Resolves the host once and returns the addresses to pin the connection to. Exempt targets
   * (allowOrigins, allowPrivate "all") skip the classification but are pinned all the same.
   */
  async function check(url: URL): Promise<string[]> {
    if (url.protocol !== "http:" && url.protocol !== "https:") {
      throw new SafeFetchBlockedError(
        "unsupported_scheme",
        `Only http and https URLs are allowed, not ${url.protocol}`,
      );
    }
    if (url.username || url.password) {
      throw new SafeFetchBlockedError("credentials_in_url", "URLs with credentials are not allowed");
    }
    const exempt = policy.allowPrivate === "all" || allowOrigins.has(url.origin);
    const host = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
    const name = host.toLowerCase().replace(/\.$/, "");
    if (!exempt && (name === "localhost" || name.endsWith(".localhost"))) {
      throw blocked(url, "loopback");
    }
    let addresses: string[];
    if (isIP(host)) {
      addresses = [host];
    } else {
      try {
        addresses = await resolve(host);
      } catch (cause) {
        throw new AppError("service_unavailable", `DNS lookup failed for ${url.host}`, { cause });
      }
      if (addresses.length === 0)
        throw new AppError("service_unavailable", `DNS lookup found no address for ${url.host}`);
    }
    for (const address of addresses) {
      const kind = exempt ? null : classifyAddress(address);
      if (kind) throw blocked(url, kind);
    }
    return addresses;
  }

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
    const failure = (cause: unknown, target: URL): unknown => {
      if (cause instanceof SafeFetchBlockedError || cause instanceof AppError) return cause;
      if (init.signal?.aborted) return init.signal.reason;
      if (deadline.signal.aborted) {
        return new AppError(
          "service_unavailable",
          `${target.origin} did not answer within ${policy.timeoutMs} ms`,
          {
            cause,
          },
        );
      }
      return new AppError("service_unavailable", `Could not reach ${target.origin} (${errorCode(cause)})`, {
        cause,
      });
    };

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
      throw failure(cause, url);
    } finally {
      clearTimeout(timer);
    }
  };
}

/** Where a response redirects to, when this call follows it; undefined when the response is the answer. */
function redirectTarget(response: RawResponse, url: URL, init: SafeFetchInit): URL | undefined {
  const location = response.headers.get("location");
  if (init.redirect === "manual" || !REDIRECT_STATUSES.has(response.status) || !location) return undefined;
  let next: URL;
  try {
    next = new URL(location, url);
  } catch {
    response.discard();
    throw new AppError("service_unavailable", `${url.origin} redirected to an invalid URL`);
  }
  if (init.followCrossOrigin === false && next.origin !== url.origin) return undefined;
  return next;
}

function blocked(url: URL, kind: AddressClass): SafeFetchBlockedError {
  return new SafeFetchBlockedError(
    "blocked_address",
    `${url.host} is a ${kind} address; server-side requests go only to public addresses`,
    kind,
  );
}

function originOf(value: string): string {
  try {
    return new URL(value).origin;
  } catch {
    return value;
  }
}

async function defaultLookup(host: string): Promise<string[]> {
  const answers = await dnsLookup(host, { all: true, verbatim: true });
  return answers.map((a) => a.address);
}

/** Normalises method, headers and any BodyInit to bytes, the way `fetch` would encode them. */
async function prepare(url: URL, init: SafeFetchInit): Promise<PreparedRequest> {
  const method = (init.method ?? "GET").toUpperCase();
  if (init.body === undefined || init.body === null) {
    return { method, headers: new Headers(init.headers), body: null };
  }
  // A Request encodes strings, URLSearchParams, FormData, Blob and streams and sets Content-Type.
  const encoded = new Request(url.href, {
    method,
    headers: init.headers,
    body: init.body,
    duplex: "half",
  } as RequestInit);
  return { method, headers: new Headers(encoded.headers), body: new Uint8Array(await encoded.arrayBuffer()) };
}

/** The request for the next hop, following the fetch standard's method rewriting. */
function redirected(request: PreparedRequest, status: number, crossOrigin: boolean): PreparedRequest {
  const headers = new Headers(request.headers);
  if (crossOrigin) for (const name of ORIGIN_BOUND_HEADERS) headers.delete(name);
  const toGet =
    status === 303
      ? request.method !== "HEAD"
      : (status === 301 || status === 302) && request.method === "POST";
  if (!toGet) return { ...request, headers };
  for (const name of [
    "content-type",
    "content-length",
    "content-encoding",
    "content-language",
    "content-location",
  ]) {
    headers.delete(name);
  }
  return { method: "GET", headers, body: null };
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
