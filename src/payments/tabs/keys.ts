import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { familyOf, loadKey, type SignerKey } from "../../chains/index.js";
import type { SignerAccess } from "../ports/index.js";

/**
 * A tab's secrets. Its token is 32 random bytes (`x4t_` + base64url), handed out once; the store
 * keeps its SHA-256, and the tab's id is made from that hash, so a token finds its tab in one read.
 * Its session key is derived from the service's tab secret and the tab's id (HMAC-SHA256): nothing
 * of it is stored, and a restarted service (or another instance with the same secret) can still
 * return what a tab holds.
 */

export function newToken(): string {
  return `x4t_${randomBytes(32).toString("base64url")}`;
}

export function tokenHash(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}

export function tabIdOf(hash: string): string {
  return `tab_${hash.slice(0, 24)}`;
}

/** Whether a token is the one whose hash the tab keeps (constant time). */
export function tokenMatches(token: string, hash: string): boolean {
  const a = Buffer.from(tokenHash(token), "hex");
  const b = Buffer.from(hash, "hex");
  return a.length === b.length && timingSafeEqual(a, b);
}

export interface SessionKey {
  address: string;
  signer: SignerAccess;
  /** What the key is made from, for a family that signs a tab's return itself (Solana). */
  seed: Uint8Array;
}

/** The session key of a tab on `network` (its RPC from `rpcUrls`); undefined where its family cannot hold tabs. */
export async function sessionKey(
  config: { secret: Uint8Array; rpcUrls: Record<string, string> },
  tabId: string,
  network: string,
): Promise<SessionKey | undefined> {
  const family = familyOf(network);
  if (!family?.keyFromSeed) return undefined;
  const seed = createHmac("sha256", config.secret).update(`x402-chat-agent tab session ${tabId}`).digest();
  const key = family.keyFromSeed(seed) as SignerKey;
  const loaded = await loadKey(key);
  const rpcUrl = Object.hasOwn(config.rpcUrls, network) ? config.rpcUrls[network] : undefined;
  return {
    address: loaded.address,
    signer: { schemeFor: (n) => loaded.schemesFor(n, rpcUrl) },
    seed,
  };
}
