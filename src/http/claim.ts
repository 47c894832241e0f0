import { createHash, randomUUID } from "node:crypto";
import { AppError, answerWithin } from "../errors/index.js";
import type { Logger } from "../log/index.js";
import { sortedKeys, type ValidatedApproval } from "../protocol/index.js";
import { chooseMode, type Mode, replay } from "./answer.js";
import {
  DEFAULT_IDEMPOTENCY_LEASE_MS,
  type HeldClaim,
  holdClaim,
  type IdempotencyState,
  type IdempotencyStore,
  type OutcomeRebuilder,
  type RebuiltOutcome,
} from "./idempotency.js";
import type {
  ChatVars,
  ClaimVars,
  IdempotencyKeyVars,
  Middleware,
  PayerVars,
  QuotaVars,
  VarsContext,
} from "./vars.js";

/** What the claim reads: the chat request, its key, its payer and the quota key. */
type ClaimReads = ChatVars & IdempotencyKeyVars & PayerVars & QuotaVars;
type ClaimContext = VarsContext<ClaimReads & ClaimVars>;

/**
 * Idempotency as middleware (docs/protocol.md, "Idempotency-Key" and "After a crash"): a request
 * sent again gets its first outcome replayed, one still running is refused, and a key whose attempt
 * died is answered from the ledger; only a request granted its key goes on to the route, holding the
 * claim on `c.var.claim` until its turn ends.
 */
export interface ClaimDeps {
  /** Where outcomes are kept; without it the header is accepted but not enforced. */
  idempotency?: IdempotencyStore;
  /** How long a claim is held without renewal (default 10 s); renewed every third of it. */
  idempotencyLeaseMs?: number;
  /** Answers a key whose attempt died from the ledger (payments on); without it such a key runs afresh. */
  rebuild?: OutcomeRebuilder;
  /** Whether approvals can be taken up at all (payments on). */
  approvals: boolean;
  /** The clock of claims and their leases; default the system's. */
  now?: () => Date;
  logger: Logger;
}

const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

/** Checks the Idempotency-Key header (1-255 visible ASCII characters) and puts it on `c.var`. */
export function idempotencyKeyHeader(): Middleware<IdempotencyKeyVars> {
  return async (c, next) => {
    const key = c.req.header("idempotency-key");
    if (key !== undefined && !IDEMPOTENCY_KEY.test(key)) {
      throw new AppError("invalid_request", "Idempotency-Key must be 1-255 visible ASCII characters.");
    }
    c.set("idempotencyKey", key);
    await next();
  };
}

/** Claims the request's key (its Idempotency-Key, or an approval's answer), or answers it from the past. */
export function claimIdempotency(deps: ClaimDeps): Middleware<ClaimVars, ClaimReads> {
  return async (c, next) => {
    c.set("claim", undefined);
    const answer = c.var.chat.approval;
    const mode = chooseMode(c.req.header("accept"));
    const answered = answer ? await claimApproval(c, deps, answer, mode) : await claimRequest(c, deps, mode);
    if (answered) return answered;
    await next();
  };
}

async function claimRequest(c: ClaimContext, deps: ClaimDeps, mode: Mode): Promise<Response | undefined> {
  const idempotencyKey = c.var.idempotencyKey;
  const store = deps.idempotency;
  if (!idempotencyKey || !store) return undefined;
  const request = c.var.chat;
  // Keys are scoped to the caller, so two callers cannot collide or read each other's outcome.
  const { claim, held } = await claimKey(deps, store, {
    key: sha256(`${c.var.callerKey}\n${idempotencyKey}`),
    wallet: c.var.payer.wallet?.address ?? null,
    // The body as a value: a retry that writes its keys in another order is the same request.
    fingerprint: sha256(JSON.stringify(sortedKeys(c.var.body))),
    requestId: c.var.payer.scopeId,
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
    // Until this attempt runs, the key stays the earlier attempt's: a later taker must find its
    // payments (else it would run afresh and pay again).
    const previous = claim.requestId ?? undefined;
    const rebuilt = await whileHeld(
      held,
      () => (previous && deps.rebuild ? deps.rebuild.request(previous, request.model) : undefined),
      previous,
    );
    if (rebuilt) return await answerRebuilt(held, rebuilt, mode, previous);
    // Nothing was paid under it: this attempt runs afresh, and from now on its payments answer the
    // key (a later taker rebuilds from them, never runs a third time beside them).
    if (!(await held.adopt(c.var.payer.scopeId))) {
      throw new AppError("idempotency_conflict", "A request with this Idempotency-Key is still running.");
    }
  }
  c.set("claim", held);
  return undefined;
}

/**
 * A request that answers an approval (docs/protocol.md, "Approval"). The answer itself is the
 * idempotency key: the same answer sent again replays the recorded outcome, and one still running
 * is refused with 409, so one approval never pays twice.
 */
async function claimApproval(
  c: ClaimContext,
  deps: ClaimDeps,
  answer: ValidatedApproval,
  mode: Mode,
): Promise<Response | undefined> {
  const { wallet, caller } = c.var.payer;
  if (!deps.approvals || !wallet) {
    throw new AppError("approval_not_found", "Payments are off on this server: nothing awaits approval.");
  }
  const store = deps.idempotency;
  if (!store) return undefined;
  const proof =
    answer.kind === "signature"
      ? answer.signature.toLowerCase() // hex case carries no meaning: one signature, one key
      : answer.kind === "transaction"
        ? answer.transaction
        : "reject";
  const digest = sha256(`${answer.paymentId}\n${answer.kind}\n${proof}`);
  const key = sha256(`${c.var.callerKey}\n${wallet.address}\napproval\n${digest}`);
  const { claim, held } = await claimKey(deps, store, { key, wallet: wallet.address, fingerprint: digest });
  if (claim.state === "replay") return await replay(claim.response, mode);
  if (!held) {
    throw new AppError(
      "approval_in_progress",
      "This approval is already being processed; wait for its answer.",
    );
  }
  if (claim.state === "taken-over") {
    // The attempt that held this answer died. The payment's row is the truth: once it left
    // awaiting_approval (approve_payment moves it exactly once) the answer is rebuilt from it and
    // nothing is signed again; while it still waits, the dead attempt paid nothing and this one runs.
    const rebuilt = await whileHeld(held, () =>
      deps.rebuild?.approval(answer.paymentId, c.var.chat.model, {
        wallet: wallet.address,
        caller: caller ?? null,
      }),
    );
    if (rebuilt) return await answerRebuilt(held, rebuilt, mode);
  }
  c.set("claim", held);
  return undefined;
}

/**
 * The claim, bounded by its own lease: a database that takes connections but never answers must not
 * hold the request past its deadline. A claim that commits later is held by nobody and lapses with
 * its lease, so the next attempt takes it over (and finds nothing this one ran: it never started).
 */
function withinLease(claiming: Promise<IdempotencyState>, leaseMs: number): Promise<IdempotencyState> {
  return answerWithin(
    claiming,
    leaseMs,
    () =>
      new AppError(
        "store_unavailable",
        "The payment ledger did not answer while claiming this Idempotency-Key; nothing ran. Send it again shortly.",
      ),
  );
}

/**
 * Claim a key for this attempt under a lease (docs/protocol.md, "After a crash"); when granted
 * ("new" or "taken-over") the claim is held, its lease renewed until it is completed or released.
 */
async function claimKey(
  deps: ClaimDeps,
  store: IdempotencyStore,
  claim: { key: string; wallet: string | null; fingerprint: string; requestId?: string },
): Promise<{ claim: IdempotencyState; held?: HeldClaim }> {
  const owner = randomUUID();
  const leaseMs = deps.idempotencyLeaseMs ?? DEFAULT_IDEMPOTENCY_LEASE_MS;
  const now = deps.now ?? (() => new Date());
  const state = await withinLease(
    store.claimIdempotencyKey({ ...claim, owner, leaseMs, now: now() }),
    leaseMs,
  );
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

/**
 * Run `work` holding the claim; if it throws, let the claim lapse (still naming `requestId`, the
 * attempt whose payments answer it) so the next attempt tries again.
 */
async function whileHeld<T>(held: HeldClaim, work: () => Promise<T> | T, requestId?: string): Promise<T> {
  try {
    return await work();
  } catch (error) {
    await held.lapse(requestId).catch(() => {});
    throw error;
  }
}

/**
 * Send an answer rebuilt from the ledger, as a replay. A final one is kept for replay from now on;
 * one the ledger cannot finish yet (a payment still being checked on chain) lets the claim lapse,
 * so the next attempt rebuilds it again, by then from the reconciled row.
 */
async function answerRebuilt(
  held: HeldClaim,
  rebuilt: RebuiltOutcome,
  mode: Mode,
  requestId?: string,
): Promise<Response> {
  const response = { events: rebuilt.events };
  if (rebuilt.final) await held.complete(response);
  else await held.lapse(requestId);
  return replay(response, mode);
}
