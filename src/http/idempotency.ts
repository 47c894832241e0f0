/**
 * The HTTP layer's idempotency port: where the outcome of a chat request sent with an
 * `Idempotency-Key` (or of an approval's answer, its own key) is kept, so a retry replays it
 * instead of running (and paying) again (docs/protocol.md). src/store implements it on PostgreSQL;
 * the composition root wires it.
 *
 * A claim is held by its owner under a lease of a few seconds, renewed while the attempt runs
 * ({@link holdClaim}). A process that dies stops renewing: once the lease lapses, the next claim of
 * the key takes it over ("taken-over") and answers from what the ledger knows, never by paying again.
 */

import type { StreamEvent } from "../protocol/index.js";

/** How long an idempotency key is remembered. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

/** How long a claim stays held without renewal (IDEMPOTENCY_LEASE_MS); renewed every third of it. */
export const DEFAULT_IDEMPOTENCY_LEASE_MS = 10_000;

export interface IdempotencyClaim {
  key: string;
  /** The wallet the request is for, or null; a key reused with another wallet is a conflict. */
  wallet: string | null;
  /** A hash of the request body; a key reused with another body is a conflict. */
  fingerprint: string;
  now: Date;
  /** Who holds the claim when it is granted (one id per attempt). */
  owner: string;
  /** The claim is held until `now + leaseMs` unless renewed. */
  leaseMs: number;
  /** The chat request id of this attempt (its payments carry it), kept for whoever takes over. */
  requestId?: string;
}

export type IdempotencyState =
  /** First time: the caller owns the key and must complete or release it. */
  | { state: "new" }
  /** Another attempt with this key is still running (its lease is live). */
  | { state: "in-progress" }
  /**
   * The attempt that held the key stopped renewing its lease (its process died): the caller owns
   * the key now. `requestId` is the dead attempt's request id (null when it had none): what it
   * paid is in the ledger under it.
   */
  | { state: "taken-over"; requestId: string | null }
  /** A finished attempt: send its response again, do nothing else. */
  | { state: "replay"; response: unknown }
  /** The key was used with another body or wallet. */
  | { state: "conflict" };

export interface IdempotencyStore {
  /**
   * Claim a key. Exactly one concurrent claimer gets "new" (or "taken-over"). Keys expire after
   * 24 h; an expired key is claimed afresh. A key whose owner stopped renewing its lease is taken
   * over by the next claimer, atomically: of two racing, exactly one wins.
   */
  claimIdempotencyKey(claim: IdempotencyClaim): Promise<IdempotencyState>;
  /** Extend the owner's lease to `now + leaseMs`; false when the owner no longer holds the key. */
  renewIdempotencyKey(key: string, owner: string, now: Date, leaseMs: number): Promise<boolean>;
  /** Store an attempt's outcome for replay (the first outcome stored wins). */
  completeIdempotencyKey(key: string, response: unknown): Promise<void>;
  /** Forget the owner's in-progress key whose attempt failed before paying anything, so a retry may run. */
  releaseIdempotencyKey(key: string, owner: string): Promise<void>;
  /**
   * Let go of the claim without forgetting the key: its lease ends now, so the next claim takes
   * it over and rebuilds the answer again (an outcome the ledger does not know yet).
   */
  lapseIdempotencyKey(key: string, owner: string, now: Date): Promise<void>;
}

/** An answer rebuilt from the ledger for a key whose attempt died; `final` when it can be kept for replay. */
export interface RebuiltOutcome {
  events: StreamEvent[];
  /** Every payment reached an end state (settled, failed, rejected...): store it for replay. */
  final: boolean;
}

/** Rebuilds answers from the ledger (the payments capability provides it). */
export interface OutcomeRebuilder {
  /** An approval answer's outcome from its payment's row; undefined while the row still awaits approval. */
  approval(
    paymentId: string,
    model: string,
    who: { wallet: string; caller: string | null },
  ): Promise<RebuiltOutcome | undefined>;
  /** A request's outcome from the payments it made; undefined when it made none. */
  request(requestId: string, model: string): Promise<RebuiltOutcome | undefined>;
}

/** A claim being held: its lease is renewed until it is completed, released or lapsed. */
export interface HeldClaim {
  readonly owner: string;
  /**
   * Aborts once this attempt can no longer be sure it holds the key: another attempt took it over,
   * or no renewal has succeeded for two thirds of the lease (the store is unreachable, the event
   * loop stalled), so the lease may lapse before anyone notices. The attempt then starts no new
   * payment: a taker that found nothing reserved runs afresh, and both must not pay.
   */
  readonly lost: AbortSignal;
  complete(response: unknown): Promise<void>;
  release(): Promise<void>;
  lapse(): Promise<void>;
}

/**
 * Keep a granted claim alive: renew its lease every third of `leaseMs` (an unref'd timer, so it
 * never keeps the process up) until the attempt completes, releases or lapses it.
 */
export function holdClaim(
  store: IdempotencyStore,
  key: string,
  owner: string,
  leaseMs: number,
  onError: (error: unknown) => void,
  now: () => Date = () => new Date(),
): HeldClaim {
  let stopped = false;
  const lost = new AbortController();
  const lose = () => {
    if (!stopped && !lost.signal.aborted) lost.abort(new Error("the idempotency claim was lost"));
    stop();
  };
  // Rearmed by every successful renewal: two missed renewals and the claim counts as lost.
  let fence: ReturnType<typeof setTimeout> | undefined;
  const arm = () => {
    if (fence) clearTimeout(fence);
    fence = setTimeout(lose, Math.max(1, Math.floor((leaseMs * 2) / 3)));
    fence.unref();
  };
  const timer = setInterval(
    () => {
      store.renewIdempotencyKey(key, owner, now(), leaseMs).then(
        (held) => {
          if (stopped) return;
          if (held) arm();
          else lose();
        },
        (error: unknown) => onError(error),
      );
    },
    Math.max(1, Math.floor(leaseMs / 3)),
  );
  timer.unref();
  arm();
  const stop = () => {
    stopped = true;
    clearInterval(timer);
    if (fence) clearTimeout(fence);
  };
  return {
    owner,
    lost: lost.signal,
    complete: (response) => {
      stop();
      return store.completeIdempotencyKey(key, response);
    },
    release: () => {
      stop();
      return store.releaseIdempotencyKey(key, owner);
    },
    lapse: () => {
      stop();
      return store.lapseIdempotencyKey(key, owner, now());
    },
  };
}
