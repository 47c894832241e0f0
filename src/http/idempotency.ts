/**
 * The HTTP layer's idempotency port: where the outcome of a chat request sent with an
 * `Idempotency-Key` (or of an approval's answer, its own key) is kept, so a retry replays it
 * instead of running (and paying) again (docs/protocol.md). The port itself is src/idempotency
 * (src/store implements it); here: holding a claim and rebuilding an answer from the ledger.
 *
 * A claim is held by its owner under a lease of a few seconds, renewed while the attempt runs
 * ({@link holdClaim}). A process that dies stops renewing: once the lease lapses, the next claim of
 * the key takes it over ("taken-over") and answers from what the ledger knows, never by paying again.
 */

import type { IdempotencyStore } from "../idempotency/index.js";
import type { StreamEvent } from "../protocol/index.js";

export {
  DEFAULT_IDEMPOTENCY_LEASE_MS,
  IDEMPOTENCY_TTL_MS,
  type IdempotencyClaim,
  type IdempotencyState,
  type IdempotencyStore,
} from "../idempotency/index.js";

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
  /** Let the lease end now; `requestId`: the attempt whose payments answer the key (see the store). */
  lapse(requestId?: string): Promise<void>;
  /** A taker runs afresh as `requestId` (see the store): false when the claim is no longer held. */
  adopt(requestId: string): Promise<boolean>;
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
      return store.completeIdempotencyKey(key, owner, response);
    },
    release: () => {
      stop();
      return store.releaseIdempotencyKey(key, owner);
    },
    lapse: (requestId) => {
      stop();
      return store.lapseIdempotencyKey(key, owner, now(), requestId);
    },
    adopt: (requestId) => store.adoptIdempotencyKey(key, owner, requestId),
  };
}
