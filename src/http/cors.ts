import { PROTOCOL_HEADER } from "../protocol/index.js";
import type { Middleware } from "./vars.js";

/**
 * CORS with an allow-list (docs/protocol.md, "Calls from other origins"). A page on an origin listed
 * in `CORS_ORIGINS` may call the API routes: its preflight gets 204 with the methods and headers
 * the API takes, and every answer (a stream, a replay, a problem+json error) names that origin and
 * exposes the headers a client reads. Any other origin gets no CORS header at all, so the browser
 * keeps the answer from its page; an origin is never echoed unless it is listed. `Vary: Origin`
 * goes on every answer, so a cache never hands one origin's answer to another.
 *
 * No `Access-Control-Allow-Credentials`: callers authenticate with a bearer token they send
 * themselves in `Authorization`, and the service sets no cookie, so a cross-origin request needs
 * no credentials mode (and a page cannot ride on cookies a user has elsewhere).
 */
export interface CorsOptions {
  /** Exact origins (`scheme://host[:port]`), as validated by the configuration. */
  origins: readonly string[];
}

/** What the API accepts from a page: its methods (DELETE: signing out) and the request headers a client sends. */
export const CORS_ALLOW_METHODS = "GET, POST, DELETE";
export const CORS_ALLOW_HEADERS = "Content-Type, Authorization, Idempotency-Key, Accept";
/** What a client reads from an answer: the request id, the protocol version, the replay marker, Retry-After. */
export const CORS_EXPOSE_HEADERS = [
  "X-Request-Id",
  PROTOCOL_HEADER,
  "Idempotent-Replayed",
  "Retry-After",
].join(", ");
/** How long a browser may keep a preflight's answer, in seconds. */
export const CORS_MAX_AGE_S = 600;

/** Whether `path` is an API route other origins may call (not the page, the probes or the devnet's keys). */
export function corsPath(path: string): boolean {
  return (
    path === "/api/chat" ||
    path === "/api/payments" ||
    path.startsWith("/api/payments/") ||
    path.startsWith("/api/approvals/") ||
    // Signing in with a wallet from a listed page (its nonce names that page: docs/protocol.md).
    path === "/api/auth/wallet" ||
    path === "/api/auth/wallet/nonce"
  );
}

function addVaryOrigin(headers: Headers): void {
  const vary = headers.get("vary");
  if (!vary) headers.set("Vary", "Origin");
  else if (!vary.split(",").some((v) => v.trim().toLowerCase() === "origin" || v.trim() === "*")) {
    headers.set("Vary", `${vary}, Origin`);
  }
}

export function cors(options: CorsOptions): Middleware {
  const allowed = new Set(options.origins);
  return async (c, next) => {
    if (!corsPath(c.req.path)) return next();
    const origin = c.req.header("origin");
    const listed = origin !== undefined && allowed.has(origin);
    if (listed && c.req.method === "OPTIONS" && c.req.header("access-control-request-method")) {
      return new Response(null, {
        status: 204,
        headers: {
          "Access-Control-Allow-Origin": origin,
          "Access-Control-Allow-Methods": CORS_ALLOW_METHODS,
          "Access-Control-Allow-Headers": CORS_ALLOW_HEADERS,
          "Access-Control-Max-Age": String(CORS_MAX_AGE_S),
          Vary: "Origin",
        },
      });
    }
    await next();
    let headers = c.res.headers;
    try {
      addVaryOrigin(headers);
    } catch {
      // An immutable answer (one fetched from elsewhere): copy it to add the headers.
      c.res = new Response(c.res.body, c.res);
      headers = c.res.headers;
      addVaryOrigin(headers);
    }
    if (listed) {
      headers.set("Access-Control-Allow-Origin", origin);
      headers.set("Access-Control-Expose-Headers", CORS_EXPOSE_HEADERS);
    }
  };
}
