import type { IssuedNonce, SessionRecord, SignInStore } from "./port.js";

/** Sign-in nonces and sessions in this process only (tests, the memory store): the same contract. */
export class MemorySignInStore implements SignInStore {
  private readonly nonces = new Map<string, IssuedNonce>();
  private readonly sessions = new Map<string, SessionRecord>();

  async issue(nonce: IssuedNonce): Promise<void> {
    for (const [key, n] of this.nonces) if (n.expiresAt <= nonce.issuedAt) this.nonces.delete(key);
    this.nonces.set(nonce.nonce, { ...nonce });
  }

  async take(nonce: string, now: Date): Promise<IssuedNonce | undefined> {
    const found = this.nonces.get(nonce);
    this.nonces.delete(nonce);
    return found && found.expiresAt > now ? found : undefined;
  }

  async openSession(session: SessionRecord): Promise<void> {
    for (const [key, s] of this.sessions) if (s.expiresAt <= session.createdAt) this.sessions.delete(key);
    this.sessions.set(session.tokenHash, { ...session });
  }

  async closeSession(tokenHash: string): Promise<boolean> {
    return this.sessions.delete(tokenHash);
  }

  async session(tokenHash: string, now: Date): Promise<SessionRecord | undefined> {
    const found = this.sessions.get(tokenHash);
    return found && found.expiresAt > now ? { ...found } : undefined;
  }
}
