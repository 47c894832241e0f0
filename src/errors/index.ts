/**
 * One error type with a closed set of codes. Each code has one HTTP status (used before the stream
 * starts, and by the JSON mode) and one finish reason (used in the `d:` line when it ends a stream).
 */

/**
 * Finish reasons (docs/protocol.md, "Finish reasons"), among them `approval-required` (the turn waits for the user's wallet
 * to approve a payment; `d:` names it), `payment-unclear` (a payment was sent and its outcome is
 * not known yet: it may have gone through, so it must not be called failed nor paid again) and
 * `error` for failures none of them fits (model provider down, deadline, shutdown).
 */
export const FINISH_REASONS = [
  "stop",
  "payment-complete",
  "payment-failed",
  "payment-unclear",
  "limit-exceeded",
  "insufficient-balance",
  "service-unavailable",
  "approval-required",
  "error",
] as const;
export type FinishReason = (typeof FINISH_REASONS)[number];

interface CodeInfo {
  status: number;
  finishReason: FinishReason;
  title: string;
  /** Seconds a client should wait before retrying (sent as `Retry-After`), for outages that pass. */
  retryAfterS?: number;
}

/** The closed table: code -> HTTP status, finish reason, problem title (and Retry-After). */
export const ERROR_CODES = {
  invalid_json: { status: 400, finishReason: "error", title: "Malformed JSON body" },
  invalid_request: { status: 400, finishReason: "error", title: "Invalid request" },
  invalid_wallet: { status: 400, finishReason: "error", title: "Invalid wallet address" },
  invalid_limits: { status: 400, finishReason: "error", title: "Invalid spending limits" },
  unsafe_content: { status: 400, finishReason: "error", title: "Unsafe message content" },
  payload_too_large: { status: 413, finishReason: "error", title: "Request body too large" },
  unsupported_media_type: { status: 415, finishReason: "error", title: "Unsupported content type" },
  // POST /mcp whose Accept does not take both answers the transport gives (JSON and an event stream).
  not_acceptable: { status: 406, finishReason: "error", title: "Not an answer the client accepts" },
  unauthorized: { status: 401, finishReason: "error", title: "Unauthorized" },
  // An operator's key used outside its scopes, or for a wallet it is not bound to
  // (docs/deploy.md#operating-it).
  forbidden: { status: 403, finishReason: "error", title: "Not allowed for this key" },
  key_exists: { status: 409, finishReason: "error", title: "A key with this name exists" },
  // Signing in with a wallet (docs/protocol.md, "Signing in with a wallet"): each refusal of
  // POST /api/auth/wallet has its own code; nothing was opened.
  signin_wrong_domain: { status: 401, finishReason: "error", title: "The message is for another service" },
  signin_expired: { status: 401, finishReason: "error", title: "The sign-in message has expired" },
  signin_nonce_used: { status: 401, finishReason: "error", title: "Unknown or used sign-in nonce" },
  signin_wrong_address: {
    status: 401,
    finishReason: "error",
    title: "The message names another wallet than its nonce",
  },
  signin_bad_signature: {
    status: 401,
    finishReason: "error",
    title: "The signature is not the wallet's over this message",
  },
  // A contract wallet's signature is judged by its chain, whose RPC did not answer: try again.
  signin_chain_unavailable: {
    status: 503,
    finishReason: "error",
    title: "The wallet's chain cannot be read now",
    retryAfterS: 5,
  },
  not_found: { status: 404, finishReason: "error", title: "Not found" },
  malformed_request: { status: 400, finishReason: "error", title: "Malformed HTTP request" },
  request_timeout: { status: 408, finishReason: "error", title: "Request timeout" },
  headers_too_large: { status: 431, finishReason: "error", title: "Request header fields too large" },
  method_not_allowed: { status: 405, finishReason: "error", title: "Method not allowed" },
  expectation_failed: { status: 417, finishReason: "error", title: "Expectation failed" },
  rate_limited: { status: 429, finishReason: "error", title: "Too many requests" },
  shutting_down: {
    status: 503,
    finishReason: "error",
    title: "Server is shutting down",
    retryAfterS: 5,
  },
  store_unavailable: {
    status: 503,
    finishReason: "error",
    title: "Payment ledger unavailable",
    retryAfterS: 5,
  },
  not_ready: { status: 503, finishReason: "error", title: "Not ready", retryAfterS: 5 },
  // The configuration cannot be used (a serverless function's start, docs/deploy.md#serverless):
  // a retry cannot help until the operator fixes it, so no Retry-After.
  misconfigured: { status: 500, finishReason: "error", title: "Service misconfigured" },
  deadline_exceeded: { status: 504, finishReason: "error", title: "Request deadline exceeded" },
  model_error: { status: 502, finishReason: "error", title: "Model provider error" },
  limit_exceeded: { status: 403, finishReason: "limit-exceeded", title: "Spending limit exceeded" },
  insufficient_balance: { status: 402, finishReason: "insufficient-balance", title: "Insufficient balance" },
  payment_failed: { status: 500, finishReason: "payment-failed", title: "Payment failed" },
  // Sent, outcome not known yet (recorded `unknown`, counted as spent, checked against the chain):
  // 202, "accepted, not finished", so no client retries it as it would a 5xx.
  payment_unclear: {
    status: 202,
    finishReason: "payment-unclear",
    title: "Payment outcome not known yet",
  },
  // The operator paused payments (all, or this key's): nothing was signed (docs/deploy.md#operating-it).
  payments_paused: { status: 403, finishReason: "payment-failed", title: "Payments are paused" },
  payment_unavailable: { status: 403, finishReason: "payment-failed", title: "Payment not possible" },
  price_changed: { status: 409, finishReason: "payment-failed", title: "Price changed since the quote" },
  approval_not_found: { status: 400, finishReason: "error", title: "No such pending payment" },
  approval_wrong_wallet: {
    status: 400,
    finishReason: "error",
    title: "The payment belongs to another wallet",
  },
  approval_wrong_caller: {
    status: 400,
    finishReason: "error",
    title: "The payment belongs to another caller",
  },
  approval_expired: { status: 400, finishReason: "error", title: "The approval window has passed" },
  approval_used: {
    status: 400,
    finishReason: "error",
    title: "The payment was already approved or rejected",
  },
  approval_invalid: {
    status: 400,
    finishReason: "error",
    title: "The signature does not approve the stored payment",
  },
  approval_in_progress: {
    status: 409,
    finishReason: "error",
    title: "This approval is being processed",
  },
  // A quote id (docs/payments.md, "Quote ids"): not this service's, altered, or another caller's;
  // or past its expiry. Nothing was probed, signed or paid.
  tab_invalid: { status: 400, finishReason: "error", title: "Not a usable tab for this request" },
  tab_not_found: { status: 404, finishReason: "error", title: "No such tab" },
  tab_closed: { status: 409, finishReason: "error", title: "The tab no longer takes this step" },
  tab_unsupported: { status: 400, finishReason: "error", title: "Tabs cannot be opened here" },
  quote_invalid: { status: 400, finishReason: "error", title: "Not a quote id this service gave you" },
  quote_expired: { status: 400, finishReason: "error", title: "The quote has expired" },
  idempotency_conflict: { status: 409, finishReason: "error", title: "Idempotency key conflict" },
  // The paid service answered the agent's call with a 4xx (other than 402, 408 and 429) before
  // any payment: the call, not the service, is at fault (a bad input, an unknown path). Nothing
  // was paid; asking again unchanged gets the same answer.
  service_refused: { status: 422, finishReason: "error", title: "The x402 service refused the call" },
  service_unavailable: {
    status: 503,
    finishReason: "service-unavailable",
    title: "x402 service unavailable",
  },
  // Paid (the chain says the money moved), and the service never gave its answer. 424, not a 5xx:
  // a client that retried a 5xx without an Idempotency-Key would pay again.
  service_undelivered: {
    status: 424,
    finishReason: "service-unavailable",
    title: "Paid, but the x402 service did not deliver",
  },
  internal: { status: 500, finishReason: "error", title: "Internal error" },
} as const satisfies Record<string, CodeInfo>;

export type ErrorCode = keyof typeof ERROR_CODES;

/** A field-level problem, as in RFC 9457 extension members. */
export interface FieldError {
  /** JSON pointer-ish dotted path, e.g. `messages.2.content`. */
  path: string;
  message: string;
}

/**
 * At most this many field problems are kept, each path and message cut to {@link MAX_FIELD_TEXT}:
 * a hostile body can hold a problem per element (120,000 of them in 240 KB), and each is sent back.
 */
export const MAX_FIELDS = 20;
const MAX_FIELD_TEXT = 200;

function boundedFields(fields: FieldError[]): FieldError[] {
  const cut = (text: string) => (text.length > MAX_FIELD_TEXT ? `${text.slice(0, MAX_FIELD_TEXT)}...` : text);
  const kept = fields.slice(0, MAX_FIELDS).map((f) => ({ path: cut(f.path), message: cut(f.message) }));
  const more = fields.length - kept.length;
  return more > 0 ? [...kept, { path: "(body)", message: `${more} more problems not listed` }] : kept;
}

/** The service's only error type. `details` must never hold secrets: it is sent to clients. */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly details: Record<string, unknown> | undefined;
  readonly fields: FieldError[] | undefined;

  constructor(
    code: ErrorCode,
    message: string,
    options: { details?: Record<string, unknown>; fields?: FieldError[]; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "AppError";
    this.code = code;
    this.details = options.details;
    this.fields = options.fields && boundedFields(options.fields);
  }

  get status(): number {
    return ERROR_CODES[this.code].status;
  }

  get finishReason(): FinishReason {
    return ERROR_CODES[this.code].finishReason;
  }

  /** Seconds to send as `Retry-After`, for codes whose cause is expected to pass. */
  get retryAfterS(): number | undefined {
    const info: CodeInfo = ERROR_CODES[this.code];
    return info.retryAfterS;
  }
}

export function isAppError(value: unknown): value is AppError {
  return value instanceof AppError;
}

/**
 * `work`'s answer, or `late()` thrown once `ms` have passed without one (a database that takes a
 * connection and never answers). What `work` answers after that is dropped: nobody waits for it.
 */
export async function answerWithin<T>(work: Promise<T>, ms: number, late: () => AppError): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(late()), ms);
  });
  work.catch(() => {});
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
