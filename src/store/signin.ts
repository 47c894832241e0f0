import type { IssuedNonce, SessionRecord, SignInStore } from "../signin/index.js";
import type { DriverQuery } from "./ledger-calls.js";

/** Wallet sign-in nonces and sessions on PostgreSQL/PGlite (migration 14; the port is src/signin/port.ts). */
export class PgSignInStore implements SignInStore {
  constructor(private readonly query: DriverQuery) {}

  async issue(nonce: IssuedNonce): Promise<void> {
    await this.query(`DELETE FROM signin_nonces WHERE expires_at <= $1::timestamptz`, [
      nonce.issuedAt.toISOString(),
    ]);
    await this.query(
      `INSERT INTO signin_nonces (nonce, origin, address, chain_id, issued_at, expires_at)
       VALUES ($1, $2, $3, $4, $5::timestamptz, $6::timestamptz)`,
      [
        nonce.nonce,
        nonce.origin,
        nonce.address,
        nonce.chainId,
        nonce.issuedAt.toISOString(),
        nonce.expiresAt.toISOString(),
      ],
    );
  }

  async take(nonce: string, now: Date): Promise<IssuedNonce | undefined> {
    // One statement: of two instances taking the same nonce, one gets the row and the other none.
    const [row] = await this.query(
      `DELETE FROM signin_nonces WHERE nonce = $1 RETURNING nonce, origin, address, chain_id, issued_at, expires_at`,
      [nonce],
    );
    if (!row) return undefined;
    const taken: IssuedNonce = {
      nonce: row.nonce as string,
      origin: row.origin as string,
      address: row.address as string,
      chainId: row.chain_id as string,
      issuedAt: new Date(row.issued_at as string),
      expiresAt: new Date(row.expires_at as string),
    };
    return taken.expiresAt > now ? taken : undefined;
  }

  async openSession(session: SessionRecord): Promise<void> {
    await this.query(`DELETE FROM wallet_sessions WHERE expires_at <= $1::timestamptz`, [
      session.createdAt.toISOString(),
    ]);
    await this.query(
      `INSERT INTO wallet_sessions (token_hash, wallet, chain_id, created_at, expires_at)
       VALUES ($1, $2, $3, $4::timestamptz, $5::timestamptz)`,
      [
        session.tokenHash,
        session.wallet,
        session.chainId,
        session.createdAt.toISOString(),
        session.expiresAt.toISOString(),
      ],
    );
  }

  async closeSession(tokenHash: string): Promise<boolean> {
    const rows = await this.query(`DELETE FROM wallet_sessions WHERE token_hash = $1 RETURNING token_hash`, [
      tokenHash,
    ]);
    return rows.length > 0;
  }

  async session(tokenHash: string, now: Date): Promise<SessionRecord | undefined> {
    const [row] = await this.query(
      `SELECT token_hash, wallet, chain_id, created_at, expires_at FROM wallet_sessions
       WHERE token_hash = $1 AND expires_at > $2::timestamptz`,
      [tokenHash, now.toISOString()],
    );
    if (!row) return undefined;
    return {
      tokenHash: row.token_hash as string,
      wallet: row.wallet as string,
      chainId: row.chain_id as string,
      createdAt: new Date(row.created_at as string),
      expiresAt: new Date(row.expires_at as string),
    };
  }
}
