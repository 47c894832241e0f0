/**
 * The idempotency port, defined once: what is kept of a request sent with an `Idempotency-Key`
 * (docs/protocol.md) so a retry replays it instead of running (and paying) again. The HTTP layer
 * uses it (src/http/idempotency.ts, src/http/claim.ts); src/store implements it on PostgreSQL and
 * in memory. Neither imports the other: both import this.
 */

/** How long an idempotency key is remembered. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

/**
 * Keys past their time are deleted by the stores as keys are claimed: at the first claim and every
 * PURGE_EVERY-th after, at most PURGE_BATCH at once (far more than are claimed meanwhile).
 */
export const PURGE_EVERY = 64;
export const PURGE_BATCH = 1000;

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
  /**
   * Store the owner's outcome for replay (the first outcome stored wins); nothing when the owner
   * no longer holds the key (another attempt took it over: its outcome is the one to keep).
   */
  completeIdempotencyKey(key: string, owner: string, response: unknown): Promise<void>;
  /**
   * The owner, which took the key over and found nothing the earlier attempt paid, runs afresh as
   * `requestId`: from now on that attempt's payments answer the key. False when the owner no longer
   * holds it. (A takeover itself keeps naming the earlier attempt, so a taker that dies before this
   * leaves the key to the next one as it found it.)
   */
  adoptIdempotencyKey(key: string, owner: string, requestId: string): Promise<boolean>;
  /** Forget the owner's in-progress key whose attempt failed before paying anything, so a retry may run. */
  releaseIdempotencyKey(key: string, owner: string): Promise<void>;
  /**
   * Let go of the claim without forgetting the key: its lease ends now, so the next claim takes
   * it over and rebuilds the answer again (an outcome the ledger does not know yet). `requestId`,
   * when given, is the attempt whose payments answer the key from now on: a taker that answered
   * from an earlier attempt's payments (and ran nothing) names that attempt again.
   */
  lapseIdempotencyKey(key: string, owner: string, now: Date, requestId?: string): Promise<void>;
}
