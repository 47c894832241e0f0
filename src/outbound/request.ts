import { AppError } from "../errors/index.js";
import type { PreparedRequest, RawResponse } from "./transport.js";

/**
 * The request a safe fetch sends, hop by hop: its body encoded once, as `fetch` would, and for a
 * redirect the next URL and the request rewritten as the fetch standard says.
 */

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
/** Dropped when a redirect leaves the origin, as browsers drop Authorization: they are meant for one service. */
const ORIGIN_BOUND_HEADERS = [
  "authorization",
  "cookie",
  "proxy-authorization",
  "payment-signature",
  "x-payment",
];

/** How a call follows redirects: `manual` returns the 3xx; `followCrossOrigin: false` stays on its origin. */
export interface RedirectRule {
  redirect?: RequestRedirect | undefined;
  followCrossOrigin?: boolean | undefined;
}

/** Normalises method, headers and any BodyInit to bytes, the way `fetch` would encode them. */
export async function prepare(url: URL, init: RequestInit): Promise<PreparedRequest> {
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

/** Where a response redirects to, when this call follows it; undefined when the response is the answer. */
export function redirectTarget(response: RawResponse, url: URL, rule: RedirectRule): URL | undefined {
  const location = response.headers.get("location");
  if (rule.redirect === "manual" || !REDIRECT_STATUSES.has(response.status) || !location) return undefined;
  let next: URL;
  try {
    next = new URL(location, url);
  } catch {
    response.discard();
    throw new AppError("service_unavailable", `${url.origin} redirected to an invalid URL`);
  }
  if (rule.followCrossOrigin === false && next.origin !== url.origin) return undefined;
  return next;
}

/** The request for the next hop, following the fetch standard's method rewriting. */
export function redirected(request: PreparedRequest, status: number, crossOrigin: boolean): PreparedRequest {
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
