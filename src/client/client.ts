import {
  type PaymentHistoryPage,
  type PaymentState,
  paymentHistorySchema,
  paymentStateSchema,
} from "../protocol/payment.js";
import { signInChallengeSchema, type WalletSession, walletSessionSchema } from "../protocol/sign-in.js";
import { ProtocolError, parseServerJson } from "../protocol/stream.js";
import { ChatHttpError, errorFromResponse } from "./errors.js";
import type { ApprovalAnswer, ChatRequestBody } from "./request.js";
import { checkChallenge, type SignInWallet } from "./sign-in.js";
import { ChatTurn } from "./turn.js";

/**
 * The chat client: one `POST /api/chat` per turn (its body: request.ts), its stream read as typed
 * events by the protocol module's own decoder (src/protocol/stream.ts), in either framing (turn.ts);
 * 429s waited out; the payment reads. Runs anywhere `fetch` and web streams do (Node 22.12 and
 * later, as the package's `engines` says; browsers; workers).
 */

export type Framing = "lines" | "sse";

/** How a 429 is handled: wait out `Retry-After` and send again, up to `maxRetries` times. */
export interface RateLimitRetry {
  /** Default 2. 0 turns waiting off (a 429 throws at once). */
  maxRetries?: number;
  /** Waits longer than this throw instead (default 120 s; the service blocks for 50 s). */
  maxWaitSeconds?: number;
}

export interface ChatClientOptions {
  /** The service's origin, e.g. `http://127.0.0.1:3000`. Omit in a browser page served by the service. */
  baseUrl?: string | URL;
  /** Default `/api/chat`. */
  path?: string;
  /** Bearer token, sent as `Authorization: Bearer <token>`; a function is asked at every request. */
  token?: string | (() => string | undefined);
  /** Extra headers on every request. */
  headers?: Record<string, string>;
  /** Default `lines` (bare lines); `sse` asks for `text/event-stream`. Both decode the same. */
  framing?: Framing;
  /** 429 handling: waits by default; `false` throws the 429 at once. */
  rateLimitRetry?: boolean | RateLimitRetry;
  /** Told before each wait for a 429, e.g. to say "rate limited, retrying in 50 s". */
  onRateLimited?: (info: { waitSeconds: number; attempt: number; error: ChatHttpError }) => void;
  /** A `fetch` to use instead of the global one. */
  fetch?: typeof fetch;
}

export interface ChatCallOptions {
  signal?: AbortSignal;
  /** Sent as `Idempotency-Key`: a retry with the same key and body replays the first outcome and never pays twice. */
  idempotencyKey?: string;
  headers?: Record<string, string> | Headers;
  framing?: Framing;
  rateLimitRetry?: boolean | RateLimitRetry;
}

const ACCEPT: Record<Framing, string> = { lines: "text/plain", sse: "text/event-stream" };

/** Filters of {@link ChatClient.listPayments} (docs/protocol.md, "Listing payments"). */
export interface PaymentListQuery {
  /** Ledger statuses, e.g. `["settled"]`. */
  status?: string[];
  /** Made at or after. */
  since?: Date;
  /** Made before. */
  until?: Date;
  /** Rows a page, 1 to 100 (default 20). */
  limit?: number;
  /** The previous page's `nextCursor`. */
  cursor?: string;
}

/** A client for one service. */
export class ChatClient {
  private readonly url: string;
  /** What it was made with (its base URL, token, headers and fetch), for clients beside it (tabs). */
  readonly options: ChatClientOptions;

  constructor(options: ChatClientOptions = {}) {
    this.options = options;
    const path = options.path ?? "/api/chat";
    this.url = options.baseUrl === undefined ? path : new URL(path, options.baseUrl).href;
  }

  /**
   * Send one turn. Resolves once the service accepted it (the stream is open) with a
   * {@link ChatTurn} to iterate; rejects with {@link ChatHttpError} when the service refused it
   * (after waiting out 429s unless told not to), or with the fetch's error (network, abort).
   */
  async chat(body: ChatRequestBody, options: ChatCallOptions = {}): Promise<ChatTurn> {
    const retry = retryPolicy(options.rateLimitRetry ?? this.options.rateLimitRetry);
    const payload = JSON.stringify(body);
    for (let attempt = 1; ; attempt++) {
      const response = await this.post(payload, options);
      if (response.ok && response.body) return new ChatTurn(response, options.signal);
      const error = response.ok
        ? new ChatHttpError({
            type: "about:blank",
            title: "No body",
            status: response.status,
            code: "no_body",
          })
        : await errorFromResponse(response);
      // The service always says how long; without it, a second rather than at once.
      const wait = error.retryAfterSeconds ?? 1;
      if (error.status !== 429 || attempt > retry.maxRetries || wait > retry.maxWaitSeconds) throw error;
      this.options.onRateLimited?.({ waitSeconds: wait, attempt, error });
      await sleep(wait * 1000, options.signal);
    }
  }

  /** Answer a payment awaiting approval: the same conversation and wallet, plus the wallet's answer. */
  approve(body: ChatRequestBody, answer: ApprovalAnswer, options?: ChatCallOptions): Promise<ChatTurn> {
    return this.chat({ ...body, approval: answer }, options);
  }

  /**
   * One payment as the service's ledger holds it now (`GET /api/payments/:id`), e.g. after a turn
   * that ended `payment-unclear` (the `e:` line `payment_unclear` names it): read it until its
   * `status` is `settled` or `failed`, and do not pay again meanwhile. Only the caller that made the
   * payment (the same token, or none) can read it; any other id rejects with a 404 `not_found`
   * {@link ChatHttpError}.
   */
  getPayment(paymentId: string, options: { signal?: AbortSignal } = {}): Promise<PaymentState> {
    const path = `/api/payments/${encodeURIComponent(paymentId)}`;
    return this.getJson(path, paymentStateSchema, "The payment's state", options.signal);
  }

  /**
   * The caller's own payments (`GET /api/payments`), newest first, a page at a time: pass the
   * page's `nextCursor` back as `cursor` for the next. The bearer token decides whose they are;
   * without one the list is empty. A bad filter rejects with a 400 `invalid_request` {@link ChatHttpError}.
   */
  async listPayments(
    query: PaymentListQuery = {},
    options: { signal?: AbortSignal } = {},
  ): Promise<PaymentHistoryPage> {
    const params = new URLSearchParams();
    if (query.status?.length) params.set("status", query.status.join(","));
    if (query.since) params.set("since", query.since.toISOString());
    if (query.until) params.set("until", query.until.toISOString());
    if (query.limit !== undefined) params.set("limit", String(query.limit));
    if (query.cursor) params.set("cursor", query.cursor);
    const path = `/api/payments${params.size > 0 ? `?${params}` : ""}`;
    return this.getJson(path, paymentHistorySchema, "The payment list", options.signal);
  }

  /**
   * Sign in with a wallet (docs/clients.md, "Signing in with a wallet"): asks the service for a
   * message (`POST /api/auth/wallet/nonce`), checks that it names this page's site in a browser (this
   * service's elsewhere), this wallet and chain, and that its text is its fields, has the wallet sign it, and sends it back (`POST
   * /api/auth/wallet`). Resolves to a session whose `token` reads that wallet's payments with
   * `listPayments` and `getPayment` (pass it as this client's `token`), for 12 hours. A refusal
   * rejects with a {@link ChatHttpError} (`signin_*` codes); a message that fails the checks
   * rejects with a ProtocolError before the wallet is asked.
   */
  async signIn(wallet: SignInWallet, options: { signal?: AbortSignal } = {}): Promise<WalletSession> {
    const asked = { address: wallet.address, chainId: wallet.chainId };
    const challenge = await this.postJson("/api/auth/wallet/nonce", asked, signInChallengeSchema, options);
    // The site the message must name: the page's in a browser (where its wallet compares them),
    // else the service's.
    const base = globalThis.location?.href ?? this.options.baseUrl;
    checkChallenge(challenge, wallet, base === undefined ? undefined : new URL(base).host);
    const { message, ...fields } = challenge;
    const signature = await wallet.signMessage(message);
    return this.postJson("/api/auth/wallet", { ...fields, signature }, walletSessionSchema, options);
  }

  /**
   * Sign out (`DELETE /api/auth/wallet`): the session's token reads nothing more, on any instance
   * of the service. `token` is the session's (`signIn`'s answer); resolves once it has ended.
   */
  async signOut(token: string, options: { signal?: AbortSignal } = {}): Promise<void> {
    const path = "/api/auth/wallet";
    const url = this.options.baseUrl === undefined ? path : new URL(path, this.options.baseUrl).href;
    const headers = new Headers(this.options.headers);
    headers.set("Authorization", `Bearer ${token}`);
    const doFetch = this.options.fetch ?? globalThis.fetch;
    const init = { method: "DELETE", headers, ...(options.signal ? { signal: options.signal } : {}) };
    const response = await doFetch(url, init);
    if (!response.ok) throw await errorFromResponse(response);
  }

  /** A POST of JSON (no bearer token: signing in needs none), its answer checked against its schema. */
  private async postJson<T>(
    path: string,
    body: unknown,
    schema: { safeParse(value: unknown): { success: true; data: T } | { success: false } },
    options: { signal?: AbortSignal },
  ): Promise<T> {
    const url = this.options.baseUrl === undefined ? path : new URL(path, this.options.baseUrl).href;
    const headers = new Headers(this.options.headers);
    headers.set("Accept", "application/json");
    headers.set("Content-Type", "application/json");
    const doFetch = this.options.fetch ?? globalThis.fetch;
    const init = { method: "POST", headers, body: JSON.stringify(body) };
    const response = await doFetch(url, { ...init, ...(options.signal ? { signal: options.signal } : {}) });
    if (!response.ok) throw await errorFromResponse(response);
    const parsed = schema.safeParse(await readJson(response));
    if (!parsed.success) throw new ProtocolError(`The answer of ${path} is not what the protocol says.`);
    return parsed.data;
  }

  /** A GET of the service's JSON, with the client's headers and token, checked against its schema. */
  private async getJson<T>(
    path: string,
    schema: { safeParse(value: unknown): { success: true; data: T } | { success: false } },
    what: string,
    signal: AbortSignal | undefined,
  ): Promise<T> {
    const url = this.options.baseUrl === undefined ? path : new URL(path, this.options.baseUrl).href;
    const headers = new Headers(this.options.headers);
    headers.set("Accept", "application/json");
    const token = typeof this.options.token === "function" ? this.options.token() : this.options.token;
    if (token) headers.set("Authorization", `Bearer ${token}`);
    const doFetch = this.options.fetch ?? globalThis.fetch;
    const response = await doFetch(url, { headers, ...(signal ? { signal } : {}) });
    if (!response.ok) throw await errorFromResponse(response);
    const parsed = schema.safeParse(await readJson(response));
    if (!parsed.success) throw new ProtocolError(`${what} is not what the protocol says.`);
    return parsed.data;
  }

  /** Refuse a payment awaiting approval; the turn goes on without it. */
  reject(body: ChatRequestBody, paymentId: string, options?: ChatCallOptions): Promise<ChatTurn> {
    return this.chat({ ...body, approval: { paymentId, reject: true } }, options);
  }

  private post(payload: string, options: ChatCallOptions): Promise<Response> {
    const headers = new Headers(this.options.headers);
    headers.set("Content-Type", "application/json");
    headers.set("Accept", ACCEPT[options.framing ?? this.options.framing ?? "lines"]);
    const token = typeof this.options.token === "function" ? this.options.token() : this.options.token;
    if (token) headers.set("Authorization", `Bearer ${token}`);
    if (options.idempotencyKey) headers.set("Idempotency-Key", options.idempotencyKey);
    new Headers(options.headers).forEach((value, name) => {
      headers.set(name, value);
    });
    const doFetch = this.options.fetch ?? globalThis.fetch;
    return doFetch(this.url, {
      method: "POST",
      headers,
      body: payload,
      ...(options.signal ? { signal: options.signal } : {}),
    });
  }
}

function retryPolicy(option: boolean | RateLimitRetry | undefined): Required<RateLimitRetry> {
  if (option === false) return { maxRetries: 0, maxWaitSeconds: 0 };
  const given = option === true || option === undefined ? {} : option;
  return { maxRetries: given.maxRetries ?? 2, maxWaitSeconds: given.maxWaitSeconds ?? 120 };
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** A response's JSON as the protocol reads it (no own `__proto__`), or undefined when it is none. */
function readJson(response: Response): Promise<unknown> {
  return response
    .text()
    .then(parseServerJson, () => undefined)
    .catch(() => undefined);
}
