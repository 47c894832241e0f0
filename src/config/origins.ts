/**
 * Origins in the configuration: CORS_ORIGINS (pages of other origins that may call the API),
 * PUBLIC_URL (this service's own public origin, which approval URLs are built on), and the services
 * it may call: ALLOWED_SERVICES and ALLOW_PRIVATE_ORIGINS.
 */

import { ConfigError } from "./errors.js";

/** An exact origin (`scheme://host[:port]`, http or https, nothing else), or undefined. */
function exactOrigin(entry: string): string | undefined {
  try {
    const url = new URL(entry);
    if (url.protocol !== "http:" && url.protocol !== "https:") return undefined;
    return url.origin !== entry.toLowerCase() || url.origin === "null" ? undefined : url.origin;
  } catch {
    return undefined;
  }
}

/**
 * Parse `https://app.example.com,http://localhost:5173` (already split at commas) into exact
 * origins: scheme (http or https), host and port, nothing else. A wildcard, a path or a trailing
 * slash is refused: an origin compares by exact string, and a near miss would silently allow nobody.
 */
export function parseOrigins(entries: string[]): string[] {
  return entries.map((entry) => {
    const origin = exactOrigin(entry);
    if (origin === undefined) {
      throw new ConfigError(
        `Invalid configuration:\n  CORS_ORIGINS: expected origins separated by commas, each scheme://host[:port] with no path, e.g. https://app.example.com (got ${JSON.stringify(entry)})`,
      );
    }
    return origin;
  });
}

/**
 * PUBLIC_URL: the origin people reach this service at (`https://pay.example.com`), which approval
 * URLs are built on. Unset: `http://<HOST>:<PORT>` (a wildcard HOST, 0.0.0.0 or ::, as 127.0.0.1).
 */
export function parsePublicUrl(raw: string | undefined, host: string, port: number): string {
  if (raw === undefined || raw.trim() === "") {
    const local = host === "0.0.0.0" || host === "::" ? "127.0.0.1" : host;
    return `http://${local.includes(":") ? `[${local}]` : local}:${port}`;
  }
  const origin = exactOrigin(raw.trim());
  if (origin === undefined) {
    throw new ConfigError(
      `Invalid configuration:\n  PUBLIC_URL: expected this service's public origin, scheme://host[:port] with no path, e.g. https://pay.example.com (got ${JSON.stringify(raw)})`,
    );
  }
  return origin;
}

/** The approval page of a payment: `${publicUrl}/approve/<paymentId>`. */
export function approvalUrl(publicUrl: string, paymentId: string): string {
  return `${publicUrl}/approve/${encodeURIComponent(paymentId)}`;
}

/**
 * ALLOWED_SERVICES and ALLOW_PRIVATE_ORIGINS (already split at commas): http(s) origins, as a
 * request's `allowedServices` takes them (a trailing `/` is the origin; `https://A.example` is
 * `https://a.example`). A path, query or credentials would read narrower than what the entry
 * allows (the whole origin), and an entry with no scheme would allow nothing: both are refused.
 */
export function parseServiceOrigins(entries: string[], name: string): string[] {
  return entries.map((entry) => {
    const url = URL.canParse(entry) ? new URL(entry) : undefined;
    const plain = url && !url.username && !url.password && url.pathname === "/" && !url.search && !url.hash;
    if (url && plain && (url.protocol === "http:" || url.protocol === "https:")) return url.origin;
    throw new ConfigError(
      `Invalid configuration:\n  ${name}: expected origins separated by commas, each scheme://host[:port] with no path, e.g. https://weather.example.com (got ${JSON.stringify(entry)}); a service's whole origin is allowed or none of it`,
    );
  });
}

/** ALLOWED_SERVICES: `any` (the default) alone, or origins. */
export function parseAllowedServices(entries: string[]): string[] | "any" {
  if (entries.length === 0 || (entries.length === 1 && entries[0] === "any")) return "any";
  if (entries.includes("any")) {
    throw new ConfigError(
      "Invalid configuration:\n  ALLOWED_SERVICES: `any` allows every service, so it cannot be listed with origins; give either `any` or the origins",
    );
  }
  return parseServiceOrigins(entries, "ALLOWED_SERVICES");
}
