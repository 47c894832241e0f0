import { lookup as dnsLookup } from "node:dns/promises";
import { isIP } from "node:net";
import { AppError } from "../errors/index.js";
import { type AddressClass, classifyAddress } from "./address.js";

/**
 * Where a server-side request may go: http(s) without credentials in the URL, to a host whose
 * every address is public unless the operator allows more. Each hop is checked here before
 * anything is sent, and its connection pinned to the addresses checked (safe-fetch.ts says why).
 */

/** Where a {@link SafeFetch} may go. */
export interface TargetPolicy {
  /** `"none"`: public unicast addresses only. `"all"`: no address check (local development only). */
  allowPrivate: "none" | "all";
  /** Origins (`http://127.0.0.1:4021`) allowed even when they resolve to private or loopback addresses. */
  allowOrigins?: string[];
  /** DNS override: every address the host resolves to. Default `dns.lookup(host, { all: true })`. */
  lookup?: (host: string) => Promise<string[]>;
}

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

/**
 * The check of one hop's URL under `policy`: it resolves the host once and returns the addresses
 * to pin the connection to. Exempt targets (allowOrigins, allowPrivate "all") skip the
 * classification but are pinned all the same.
 */
export function targetCheck(policy: TargetPolicy): (url: URL) => Promise<string[]> {
  const allowOrigins = new Set((policy.allowOrigins ?? []).map(originOf));
  const resolve = policy.lookup ?? defaultLookup;
  return async (url) => {
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
  };
}

function blocked(url: URL, kind: AddressClass): SafeFetchBlockedError {
  return new SafeFetchBlockedError(
    "blocked_address",
    `${url.host} is ${/^[aeiou]/.test(kind) ? "an" : "a"} ${kind} address; server-side requests go only to public addresses`,
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
