/**
 * The HTTP layer's idempotency port: where the outcome of a chat request sent with an
 * `Idempotency-Key` is kept, so a retry replays it instead of running (and paying) again
 * (docs/protocol.md). src/store implements it on PostgreSQL; the composition root wires it.
 */

/** How long an idempotency key is remembered. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

export interface IdempotencyClaim {
  key: string;
  /** The wallet the request is for, or null; a key reused with another wallet is a conflict. */
  wallet: string | null;
  /** A hash of the request body; a key reused with another body is a conflict. */
  fingerprint: string;
  now: Date;
}

export type IdempotencyState =
  /** First time: the caller owns the key and must complete or release it. */
  | { state: "new" }
  /** Another attempt with this key is still running. */
  | { state: "in-progress" }
  /** A finished attempt: send its response again, do nothing else. */
  | { state: "replay"; response: unknown }
  /** The key was used with another body or wallet. */
  | { state: "conflict" };

export interface IdempotencyStore {
  /**
   * Claim a key for a retried chat request. Exactly one concurrent claimer gets "new". Keys expire
   * after 24 h; an expired key is claimed afresh. A key whose attempt died stays "in-progress" until
   * it expires, since that attempt may have paid.
   */
  claimIdempotencyKey(claim: IdempotencyClaim): Promise<IdempotencyState>;
  /** Store the first attempt's outcome for replay. */
  completeIdempotencyKey(key: string, response: unknown): Promise<void>;
  /** Forget an in-progress key whose attempt failed before paying anything, so a retry may run. */
  releaseIdempotencyKey(key: string): Promise<void>;
}
