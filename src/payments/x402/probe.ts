import { AppError } from "../../errors/index.js";
import type { SafeFetch, SafeResponse } from "../../outbound/index.js";
import { SafeFetchBlockedError } from "../../outbound/index.js";
import { cleanText, sortedKeys } from "../../protocol/index.js";
import type { PayInput } from "../../tools/contract.js";
import type { Reason } from "../rules/index.js";
import { type PaymentDemand, readPaymentDemand } from "./wire.js";

/** An HTTP call to a service, as the tools describe it. */
export interface Target {
  url: string;
  method: "GET" | "POST";
  body?: string;
}

/**
 * RFC 3986, 6.2.2: an escaped unreserved character is that character (`/weath%65r` is `/weather`),
 * and an escape's hex is upper case (`%2f` is `%2F`). The query is re-encoded by its sort.
 */
function normalizeEscapes(path: string): string {
  return path.replace(/%([0-9a-fA-F]{2})/g, (_, hex: string) => {
    const char = String.fromCharCode(Number.parseInt(hex, 16));
    return /^[A-Za-z0-9\-._~]$/.test(char) ? char : `%${hex.toUpperCase()}`;
  });
}

/** The call in canonical form, so the same call written differently is recognised as the same call. */
export function buildTarget(input: Pick<PayInput, "url" | "method" | "query" | "body">): Target {
  const method = input.method ?? (input.body ? "POST" : "GET");
  const body = input.body ? JSON.stringify(sortedKeys(input.body)) : undefined;
  // Not an absolute URL (a model's `/weather`): kept as given, and refused when sent (`invalid_url`).
  if (!URL.canParse(input.url)) return { url: input.url, method, ...(body ? { body } : {}) };
  const url = new URL(input.url);
  url.hash = ""; // never sent: `#a` and `#b` are the same request
  url.pathname = normalizeEscapes(url.pathname);
  for (const [k, v] of Object.entries(input.query ?? {})) url.searchParams.set(k, v);
  url.searchParams.sort();
  return { url: url.toString(), method, ...(body ? { body } : {}) };
}

export type ProbeResult =
  | { kind: "free"; response: SafeResponse }
  /** `payee`: the call as it reached the service that issued the demand (after any redirects). */
  | { kind: "demand"; demand: PaymentDemand; payee: Target }
  | { kind: "refused"; reason: Reason; message: string; details?: Record<string, unknown> };

export type PaymentDemandProbe = Extract<ProbeResult, { kind: "demand" }>;

/** Send `target`, on the given admission, without any payment header. */
export function sendUnpaid(
  fetch: SafeFetch,
  target: Target,
  options: { signal: AbortSignal; timeoutMs: number; allowOrigin: (origin: string) => boolean },
): Promise<SafeResponse> {
  return fetch(target.url, {
    method: target.method,
    headers: target.body ? { "content-type": "application/json" } : {},
    ...(target.body ? { body: target.body } : {}),
    signal: AbortSignal.any([options.signal, AbortSignal.timeout(options.timeoutMs)]),
    allowOrigin: options.allowOrigin,
  });
}

/**
 * Ask a service what it costs (an unpaid request); never pays. Every origin the call reaches, the
 * first and each redirect hop, must pass `allowOrigin` before anything is sent there, and the
 * origin that answers 402 is the service that would be paid.
 */
export async function probe(
  fetch: SafeFetch,
  target: Target,
  options: { signal: AbortSignal; timeoutMs: number; allowOrigin: (origin: string) => boolean },
): Promise<ProbeResult> {
  if (target.method === "GET" && target.body !== undefined) {
    // No request can carry both: sending it would fail here and blame the service.
    const message = "A GET call takes no body: put its inputs in query, or use POST; nothing was sent.";
    return { kind: "refused", reason: "target_blocked", message };
  }
  let response: SafeResponse;
  try {
    response = await sendUnpaid(fetch, target, options);
  } catch (error) {
    return refusedCall(error, target.url);
  }
  if (response.status === 402) {
    const demand = readPaymentDemand((n) => response.headers.get(n), parseJson(response));
    if (!demand) {
      return {
        kind: "refused",
        reason: "unreadable_demand",
        message: "The service asked for payment in a form this agent cannot read.",
      };
    }
    // A redirect that turned a POST into a GET dropped the body; the paid call repeats what arrived.
    const sameMethod = response.method === target.method;
    const payee: Target = {
      url: response.url,
      method: sameMethod ? target.method : "GET",
      ...(sameMethod && target.body ? { body: target.body } : {}),
    };
    return { kind: "demand", demand, payee };
  }
  if (response.status >= 200 && response.status < 300) return { kind: "free", response };
  if (refusesTheCall(response.status)) {
    // What the service said of the call ("missing required query parameter city") lets the caller
    // mend it; its text from outside, bounded (the content rule cleans it on the way out).
    const said = serviceSaid(response);
    return {
      kind: "refused",
      reason: "service_refused",
      message: said
        ? `The service refused the call (HTTP ${response.status}), saying: ${JSON.stringify(said)}. Check what was asked of it.`
        : `The service refused the call (HTTP ${response.status}): check what was asked of it.`,
      details: { service: target.url, httpStatus: response.status, ...(said ? { serviceSaid: said } : {}) },
    };
  }
  return {
    kind: "refused",
    reason: "service_unavailable",
    message: `The service answered HTTP ${response.status}.`,
    details: { service: target.url, httpStatus: response.status },
  };
}

/**
 * A 4xx that says the call itself is wrong (bad input, unknown path, not allowed): asking again
 * unchanged gets the same answer. 408 and 429 say "not now", which is the service's state.
 */
function refusesTheCall(status: number): boolean {
  return status >= 400 && status < 500 && status !== 408 && status !== 429;
}

/** How much of a refusal's words are passed on. */
const SAID_CHARS = 200;

/**
 * A 4xx's own words: its JSON's `error`, `message` or `detail` (a string), else its plain text;
 * never an HTML page (markup, not words). One line, at most {@link SAID_CHARS} characters.
 */
function serviceSaid(response: SafeResponse): string | undefined {
  const type = response.headers.get("content-type") ?? "";
  if (/html|xml/i.test(type)) return undefined;
  const json = parseJson(response);
  const fields = json && typeof json === "object" ? (json as Record<string, unknown>) : {};
  const word = ["error", "message", "detail"].map((k) => fields[k]).find((v) => typeof v === "string");
  const text =
    typeof word === "string" ? word : json === undefined ? new TextDecoder().decode(response.body) : "";
  // Without what hides or reorders text or drives a terminal: it reaches the client as sent here.
  const line = cleanText(text).text.replace(/\s+/g, " ").trim();
  return line ? line.slice(0, SAID_CHARS) : undefined;
}

export function parseJson(response: SafeResponse): unknown {
  try {
    return JSON.parse(new TextDecoder().decode(response.body));
  } catch {
    return undefined;
  }
}

function refusedCall(error: unknown, url: string): Extract<ProbeResult, { kind: "refused" }> {
  if (error instanceof SafeFetchBlockedError && error.reason === "origin_not_allowed") {
    return {
      kind: "refused",
      reason: "origin_not_allowed",
      message: `${error.message} by the spending limits (allowedServices); nothing was sent there.`,
      details: { limit: "allowedServices" },
    };
  }
  if (error instanceof SafeFetchBlockedError && error.reason === "too_many_redirects") {
    return {
      kind: "refused",
      reason: "service_unavailable",
      message: `${error.message}.`,
      details: { service: url },
    };
  }
  if (error instanceof SafeFetchBlockedError && error.reason === "invalid_url") {
    const message = "The url is not an absolute http(s) URL: give it exactly as discover_services listed it.";
    return { kind: "refused", reason: "target_blocked", message };
  }
  if (error instanceof SafeFetchBlockedError) {
    // The error names the hop that was refused (a redirect's, when it was one), not the first URL.
    const message = `${error.message}: this server does not send requests there (${error.reason}); nothing was sent.`;
    return { kind: "refused", reason: "target_blocked", message };
  }
  // Our own words (a timeout, a refused connection), never a service's.
  const message = error instanceof AppError ? error.message : "The service could not be reached.";
  return { kind: "refused", reason: "service_unavailable", message, details: { service: url } };
}

/** The error a 402 answer's payment demand gives, if it gives one (a paid request was refused). */
export function paymentRejection(response: SafeResponse): string | undefined {
  return readPaymentDemand((n) => response.headers.get(n), parseJson(response))?.error;
}
