import { createHash, randomUUID } from "node:crypto";
import { IncomingMessage } from "node:http";
import type { Context } from "hono";
import { type AgentDeps, runTurn, type TurnInput, type TurnPrelude } from "../agent/index.js";
import { AppError } from "../errors/index.js";
import type { Logger } from "../log/index.js";
import {
  type ApprovalAnswer,
  type ChatRequest,
  PROTOCOL_HEADER,
  PROTOCOL_VERSION,
  parseChatRequest,
  REQUEST_BOUNDS,
  type SpendingLimitsInput,
  type StreamEvent,
  type Wallet,
} from "../protocol/index.js";
import type { RateLimiter } from "../ratelimit/rate-limit.js";
import { chooseMode, jsonResponse, type Mode, replay, streamHeaders } from "./answer.js";
import { readJsonBody } from "./body.js";
import { EventStream } from "./event-stream.js";
import {
  DEFAULT_IDEMPOTENCY_LEASE_MS,
  type HeldClaim,
  holdClaim,
  type IdempotencyState,
  type IdempotencyStore,
  type OutcomeRebuilder,
  type RebuiltOutcome,
} from "./idempotency.js";
import type { Lifecycle } from "./lifecycle.js";
import { problemResponse } from "./problem.js";

export interface ChatRouteDeps {
  agent: AgentDeps;
  rateLimiter: RateLimiter;
  lifecycle: Lifecycle;
  logger: Logger;
  requestTimeoutMs: number;
  heartbeatMs: number;
  /** Bearer token -> identity name. */
  authTokens: Map<string, string>;
  requireAuth: boolean;
  /** Returns the caller's IP (the app decides whether proxies are trusted). */
  clientIp: (c: Context) => string;
  /** Where Idempotency-Key outcomes are kept; without it the header is accepted but not enforced. */
  idempotency?: IdempotencyStore;
  /** How long a claim on a key is held without renewal (default 10 s); renewed every third of it. */
  idempotencyLeaseMs?: number;
  /** The clock (deadlines, leases, the turn's payments); default the system's. */
  now?: () => Date;
  /** Answers a key whose attempt died from the ledger (payments on); without it such a key runs afresh. */
  rebuild?: OutcomeRebuilder;
  /**
   * Take up a payment answered in the user's wallet (the request's `approval`): throws AppError
   * before the stream opens when it cannot be used; what it returns runs as the turn's first step.
   */
  resumeApproval?: (input: {
    answer: ApprovalAnswer;
    wallet: Wallet;
    caller?: string;
    spendingLimits?: SpendingLimitsInput;
    signal: AbortSignal;
  }) => Promise<TurnPrelude>;
}

export type { IdempotencyStore };

/** The abort reason when the client goes away (not an AppError: nobody is left to tell). */
const CLIENT_LEFT = "client disconnected";

const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

/** The clock when none is injected (ChatRouteDeps.now). */
const systemClock = (): Date => new Date();

/** What authenticating a request needs: the known bearer tokens, and whether one is required. */
export type Authenticate = Pick<ChatRouteDeps, "authTokens" | "requireAuth">;

/** The caller's bearer identity (and token); throws `unauthorized` for an unknown or missing one. */
export function authenticate(c: Context, deps: Authenticate): { identity?: string; token?: string } {
  const header = c.req.header("authorization");
  if (!header) {
    if (deps.requireAuth) throw new AppError("unauthorized", "Send Authorization: Bearer <token>.");
    return {};
  }
  const match = /^Bearer\s+(\S+)$/i.exec(header);
  const identity = match?.[1] ? deps.authTokens.get(match[1]) : undefined;
  if (!match?.[1] || identity === undefined) {
    throw new AppError("unauthorized", "The bearer token is not valid.");
  }
  return { identity, token: match[1] };
}

function rateLimitKey(identity: string | undefined, request: ChatRequest, ip: string): string {
  if (identity) return `id:${identity}`;
  if (request.wallet) return `wallet:${request.wallet.address.toLowerCase()}`;
  return `ip:${ip}`;
}

/** The Node request under @hono/node-server (`c.env.incoming`); undefined elsewhere (`app.request`). */
function nodeRequest(c: Context): IncomingMessage | undefined {
  const incoming = (c.env as { incoming?: unknown } | undefined)?.incoming;
  return incoming instanceof IncomingMessage ? incoming : undefined;
}

/** POST /api/chat: validate, authenticate, rate-limit, then stream one agent turn. */
export async function handleChat(c: Context, deps: ChatRouteDeps): Promise<Response> {
  try {
    if (deps.lifecycle.isDraining) {
      throw new AppError("shutting_down", "The server is shutting down; retry shortly.");
    }
    const body = await readJsonBody(c.req.raw, REQUEST_BOUNDS.maxBodyBytes, nodeRequest(c));
    const request = parseChatRequest(body);
    const { identity, token } = authenticate(c, deps);
    const idempotencyKey = c.req.header("idempotency-key");
    if (idempotencyKey !== undefined && !IDEMPOTENCY_KEY.test(idempotencyKey)) {
      throw new AppError("invalid_request", "Idempotency-Key must be 1-255 visible ASCII characters.");
    }

    const callerKey = rateLimitKey(identity, request, deps.clientIp(c));
    const limited = await deps.rateLimiter.consume(callerKey);
    if (!limited.ok) {
      return problemResponse(
        new AppError(
          "rate_limited",
          `Too many requests; wait ${limited.retryAfterS} s before the next one.`,
          {
            details: { retryAfterSeconds: limited.retryAfterS },
          },
        ),
        { "Retry-After": String(limited.retryAfterS) },
      );
    }

    const mode = chooseMode(c.req.header("accept"));
    if (request.approval) {
      return await resumeTurn(c, deps, request, request.approval, mode, {
        callerKey,
        ...(identity ? { identity } : {}),
        ...(token ? { token } : {}),
      });
    }
    let record: ((events: StreamEvent[], clientLeft: boolean) => Promise<void>) | undefined;
    let heldClaim: HeldClaim | undefined;
    const requestId = randomUUID();
    if (idempotencyKey && deps.idempotency) {
      const store = deps.idempotency;
      // Keys are scoped to the caller, so two callers cannot collide or read each other's outcome.
      const key = createHash("sha256").update(`${callerKey}\n${idempotencyKey}`).digest("hex");
      const { claim, held } = await claimKey(deps, store, {
        key,
        wallet: request.wallet?.address ?? null,
        fingerprint: createHash("sha256").update(JSON.stringify(body)).digest("hex"),
        requestId,
      });
      if (claim.state === "replay") return await replay(claim.response, mode);
      if (claim.state === "in-progress") {
        throw new AppError("idempotency_conflict", "A request with this Idempotency-Key is still running.");
      }
      if (claim.state === "conflict") {
        throw new AppError(
          "idempotency_conflict",
          "This Idempotency-Key was used with a different request body.",
        );
      }
      if (!held) throw new Error("a granted claim is held");
      if (claim.state === "taken-over") {
        // The attempt that held the key died: what it reserved is in the ledger under its request
        // id. Answer from that; only when it reserved nothing does the request run afresh.
        const previous = claim.requestId;
        const rebuilt = await whileHeld(held, () =>
          previous && deps.rebuild ? deps.rebuild.request(previous, request.model) : undefined,
        );
        if (rebuilt) return await answerRebuilt(held, rebuilt, mode);
      }
      // An attempt the client abandoned before any payment began is forgotten, so a retry runs;
      // any other outcome is kept and replayed.
      heldClaim = held;
      record = (events, clientLeft) =>
        clientLeft && !events.some((e) => e.type === "payment") ? held.release() : held.complete({ events });
    }
    return await startTurn(deps, request, mode, {
      requestId,
      ...(record ? { record } : {}),
      ...(heldClaim ? { lost: heldClaim.lost } : {}),
      ...(idempotencyKey ? { idempotencyKey } : {}),
      ...(token ? { bearerToken: token } : {}),
      ...(identity ? { caller: identity } : {}),
      clientSignal: c.req.raw.signal,
    });
  } catch (error) {
    if (error instanceof AppError) {
      if (error.status >= 500) deps.logger.warn("chat refused", { code: error.code, err: error });
      return problemResponse(error);
    }
    deps.logger.error("chat request failed before streaming", { err: error });
    return problemResponse(new AppError("internal", "Something went wrong before the stream started."));
  }
}

/**
 * A request that answers an approval (docs/protocol.md, "Approval"). The answer itself is the
 * idempotency key: the same answer sent again replays the recorded outcome, and one still running
 * is refused with 409, so one approval never pays twice. Every check runs before the stream opens.
 */
async function resumeTurn(
  c: Context,
  deps: ChatRouteDeps,
  request: ChatRequest,
  answer: ApprovalAnswer,
  mode: Mode,
  who: { callerKey: string; identity?: string; token?: string },
): Promise<Response> {
  const wallet = request.wallet;
  if (!deps.resumeApproval || !wallet) {
    throw new AppError("approval_not_found", "Payments are off on this server: nothing awaits approval.");
  }
  const proof =
    answer.kind === "signature"
      ? answer.signature.toLowerCase() // hex case carries no meaning: one signature, one key
      : answer.kind === "transaction"
        ? answer.transaction
        : "reject";
  const digest = createHash("sha256").update(`${answer.paymentId}\n${answer.kind}\n${proof}`).digest("hex");
  const key = createHash("sha256")
    .update(`${who.callerKey}\n${wallet.address}\napproval\n${digest}`)
    .digest("hex");
  const store = deps.idempotency;
  let held: HeldClaim | undefined;
  if (store) {
    const claimed = await claimKey(deps, store, { key, wallet: wallet.address, fingerprint: digest });
    const { claim } = claimed;
    if (claim.state === "replay") return await replay(claim.response, mode);
    if (!claimed.held) {
      throw new AppError(
        "approval_in_progress",
        "This approval is already being processed; wait for its answer.",
      );
    }
    held = claimed.held;
    if (claim.state === "taken-over") {
      // The attempt that held this answer died. The payment's row is the truth: once it left
      // awaiting_approval (approve_payment moves it exactly once) the answer is rebuilt from it and
      // nothing is signed again; while it still waits, the dead attempt paid nothing and this one runs.
      const rebuilt = await whileHeld(held, () =>
        deps.rebuild?.approval(answer.paymentId, request.model, {
          wallet: wallet.address,
          caller: who.identity ?? null,
        }),
      );
      if (rebuilt) return await answerRebuilt(held, rebuilt, mode);
    }
  }
  let prelude: TurnPrelude;
  try {
    prelude = await deps.resumeApproval({
      answer,
      wallet,
      ...(who.identity ? { caller: who.identity } : {}),
      ...(request.spendingLimits ? { spendingLimits: request.spendingLimits } : {}),
      signal: c.req.raw.signal,
    });
  } catch (error) {
    // Nothing happened: the same answer may be sent again (after a top-up, or once the service is back).
    await held?.release().catch(() => {});
    throw error;
  }
  return await startTurn(deps, request, mode, {
    prelude,
    ...(who.token ? { bearerToken: who.token } : {}),
    ...(who.identity ? { caller: who.identity } : {}),
    clientSignal: c.req.raw.signal,
    ...(held
      ? { record: (events: StreamEvent[]) => (held as HeldClaim).complete({ events }), lost: held.lost }
      : {}),
  });
}

/**
 * Claim a key for this attempt under a lease (docs/protocol.md, "After a crash"); when granted
 * ("new" or "taken-over") the claim is held, its lease renewed until it is completed or released.
 */
async function claimKey(
  deps: ChatRouteDeps,
  store: IdempotencyStore,
  claim: { key: string; wallet: string | null; fingerprint: string; requestId?: string },
): Promise<{ claim: IdempotencyState; held?: HeldClaim }> {
  const owner = randomUUID();
  const leaseMs = deps.idempotencyLeaseMs ?? DEFAULT_IDEMPOTENCY_LEASE_MS;
  const now = deps.now ?? systemClock;
  const state = await store.claimIdempotencyKey({ ...claim, owner, leaseMs, now: now() });
  if (state.state !== "new" && state.state !== "taken-over") return { claim: state };
  const held = holdClaim(
    store,
    claim.key,
    owner,
    leaseMs,
    (error) => deps.logger.warn("could not renew an idempotency lease", { err: error }),
    now,
  );
  return { claim: state, held };
}

/** Run `work` holding the claim; if it throws, let the claim lapse so the next attempt tries again. */
async function whileHeld<T>(held: HeldClaim, work: () => Promise<T> | T): Promise<T> {
  try {
    return await work();
  } catch (error) {
    await held.lapse().catch(() => {});
    throw error;
  }
}

/**
 * Send an answer rebuilt from the ledger, as a replay. A final one is kept for replay from now on;
 * one the ledger cannot finish yet (a payment still being checked on chain) lets the claim lapse,
 * so the next attempt rebuilds it again, by then from the reconciled row.
 */
async function answerRebuilt(held: HeldClaim, rebuilt: RebuiltOutcome, mode: Mode): Promise<Response> {
  const response = { events: rebuilt.events };
  if (rebuilt.final) await held.complete(response);
  else await held.lapse();
  return replay(response, mode);
}

function startTurn(
  deps: ChatRouteDeps,
  request: ChatRequest,
  mode: Mode,
  extra: {
    requestId?: string;
    idempotencyKey?: string;
    bearerToken?: string;
    caller?: string;
    prelude?: TurnPrelude;
    clientSignal: AbortSignal;
    record?: (events: StreamEvent[], clientLeft: boolean) => Promise<void>;
    /** Aborts when the idempotency claim this attempt holds was lost: it ends, paying nothing new. */
    lost?: AbortSignal;
  },
): Response | Promise<Response> {
  const requestId = extra.requestId ?? randomUUID();
  // Two reasons to stop: the client left (the model call stops; payments under way and the
  // idempotent record still finish), or the stream must end now (the deadline, a shutdown): then
  // the turn ends at once with e: and d:, whatever its tools are still doing. `turn` aborts for
  // either, with the first reason (what AbortSignal.any would give, without its cost per request);
  // `cutoff` only for the second.
  const turn = new AbortController();
  const cutoff = new AbortController();
  let clientLeft = false;
  const stop = (reason: AppError) => {
    if (cutoff.signal.aborted) return;
    cutoff.abort(reason);
    if (!turn.signal.aborted) turn.abort(reason);
  };
  const now = deps.now ?? systemClock;
  const deadline = now().getTime() + deps.requestTimeoutMs;
  const timer = setTimeout(
    () =>
      stop(
        new AppError(
          "deadline_exceeded",
          `The request took longer than ${deps.requestTimeoutMs / 1000} s and was ended.`,
          { details: { timeoutMs: deps.requestTimeoutMs } },
        ),
      ),
    deps.requestTimeoutMs,
  );
  const untrack = deps.lifecycle.track(stop);
  const onClientGone = () => {
    if (clientLeft) return;
    clientLeft = true;
    if (!turn.signal.aborted) turn.abort(CLIENT_LEFT);
  };
  extra.clientSignal.addEventListener("abort", onClientGone, { once: true });
  // The idempotency claim was lost (docs/protocol.md, "After a crash"): another attempt may answer
  // this request now, so this one ends at once and starts no new payment.
  const onClaimLost = () =>
    stop(
      new AppError(
        "idempotency_conflict",
        "This request's Idempotency-Key claim was lost (the store could not renew it); the request ended and starts no new payment. Send it again to get its outcome.",
      ),
    );
  if (extra.lost?.aborted) onClaimLost();
  else extra.lost?.addEventListener("abort", onClaimLost, { once: true });

  const input: TurnInput = {
    request,
    requestId,
    signal: turn.signal,
    cutoff: cutoff.signal,
    deadline,
    now: () => now().getTime(),
    onBackground: (work) => deps.lifecycle.keep(work),
  };
  if (extra.idempotencyKey) input.idempotencyKey = extra.idempotencyKey;
  if (extra.bearerToken) input.bearerToken = extra.bearerToken;
  if (extra.caller) input.caller = extra.caller;
  if (extra.prelude) input.prelude = extra.prelude;
  const record = extra.record;
  const seen: StreamEvent[] = [];
  /** Runs the turn; `ended` is called as soon as its last line is out, before the bookkeeping. */
  const run = async (emit: (event: StreamEvent) => void, ended: () => void) => {
    try {
      return await runTurn(
        deps.agent,
        input,
        record
          ? (event) => {
              seen.push(event);
              emit(event);
            }
          : emit,
      );
    } finally {
      clearTimeout(timer);
      extra.clientSignal.removeEventListener("abort", onClientGone);
      extra.lost?.removeEventListener("abort", onClaimLost);
      ended();
      if (record) {
        await record(seen, clientLeft).catch((error: unknown) =>
          deps.logger.error("could not store the idempotent outcome", { requestId, err: error }),
        );
      }
      untrack();
    }
  };

  if (mode === "json") {
    return jsonResponse(run, {
      "Cache-Control": "no-cache",
      "X-Accel-Buffering": "no",
      [PROTOCOL_HEADER]: PROTOCOL_VERSION,
      "X-Request-Id": requestId,
    });
  }

  const stream = new EventStream(mode, deps.heartbeatMs, onClientGone);
  run(
    (event) => stream.emit(event),
    () => stream.close(),
  ).catch((error: unknown) => {
    deps.logger.error("turn crashed", { requestId, err: error });
    stream.close();
  });
  return new Response(stream.readable, { status: 200, headers: streamHeaders(requestId, mode) });
}
