/**
 * Where wallet sign-ins keep their nonces and sessions (src/store implements it on PostgreSQL and
 * PGlite, migration 14; memory.ts in this process): shared by every instance that shares the store,
 * so a nonce issued by one is taken once by any, and a session opened on one holds on all.
 */

/** A nonce as issued: for one wallet on one chain, named in a message of one site, until `expiresAt`. */
export interface IssuedNonce {
  nonce: string;
  /** The origin the message names (its `uri`; its host is the `domain`). */
  origin: string;
  /** Canonical (src/chains `parseWallet`). */
  address: string;
  chainId: string;
  issuedAt: Date;
  expiresAt: Date;
}

/** A wallet's session: the SHA-256 of its token (never the token), the wallet, its expiry. */
export interface SessionRecord {
  tokenHash: string;
  wallet: string;
  chainId: string;
  createdAt: Date;
  expiresAt: Date;
}

export interface SignInStore {
  /** Keeps a new nonce (and drops those expired before `nonce.issuedAt`). */
  issue(nonce: IssuedNonce): Promise<void>;
  /** Takes a nonce, at most once across instances: undefined when unknown, taken, or expired at `now`. */
  take(nonce: string, now: Date): Promise<IssuedNonce | undefined>;
  /** Keeps a new session (and drops those expired before `session.createdAt`). */
  openSession(session: SessionRecord): Promise<void>;
  /** The session of this token hash; undefined when unknown or expired at `now`. */
  session(tokenHash: string, now: Date): Promise<SessionRecord | undefined>;
  /** Ends the session of this token hash on every instance; false when there was none. */
  closeSession(tokenHash: string): Promise<boolean>;
}
