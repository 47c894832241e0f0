import { createHash, randomBytes } from "node:crypto";
import type { KeyGrant } from "../payments/index.js";
import type { KeyScope, KeyStatus } from "../protocol/operator.js";

/**
 * Operator keys (docs/deploy.md#operating-it): one API key per caller, kept as a SHA-256 hash of
 * its token (the token is shown once, when created or rotated). A key names its caller, the routes
 * it may use, the wallets it may pay from and caps its requests can only tighten.
 */

export { KEY_SCOPES, type KeyScope, type KeyStatus } from "../protocol/operator.js";

/** What every operator key's token starts with, so a leaked one is recognisable (secret scanners). */
export const TOKEN_PREFIX = "x4c_";

/** A key's name: what the ledger records as the payments' caller, and what the CLI takes. */
export const KEY_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export interface KeyRecord {
  name: string;
  /** SHA-256 (hex) of the token; the token itself is never stored. */
  tokenHash: string;
  scopes: KeyScope[];
  /** The only wallets it pays from (canonical addresses); null: any. */
  wallets: string[] | null;
  /** Caps in atomic USD units; null: the server's only. */
  perTransaction: bigint | null;
  perRequest: bigint | null;
  daily: bigint | null;
  createdAt: Date;
  createdBy: string;
  expiresAt: Date | null;
  revokedAt: Date | null;
  /**
   * Hashes of the tokens it had before each rotation: refused (401), wherever else they are
   * listed. Absent: none.
   */
  retiredHashes?: readonly string[];
}

/** A new token: the prefix and 32 random bytes, base64url. */
export function newToken(): string {
  return `${TOKEN_PREFIX}${randomBytes(32).toString("base64url")}`;
}

/** What the store keeps of a token. A lookup by hash compares no secret byte by byte. */
export function hashToken(token: string): string {
  return createHash("sha256").update(token, "utf8").digest("hex");
}

export function keyStatus(key: Pick<KeyRecord, "revokedAt" | "expiresAt">, now: Date): KeyStatus {
  if (key.revokedAt) return "revoked";
  if (key.expiresAt && key.expiresAt.getTime() <= now.getTime()) return "expired";
  return "active";
}

/** What payments see of a key (Payer.grant). */
export function grantOf(key: KeyRecord): KeyGrant {
  return {
    name: key.name,
    ...(key.perTransaction !== null ? { perTransaction: key.perTransaction } : {}),
    ...(key.perRequest !== null ? { perRequest: key.perRequest } : {}),
    ...(key.daily !== null ? { daily: key.daily } : {}),
    ...(key.wallets !== null ? { wallets: key.wallets } : {}),
    generation: key.retiredHashes?.length ?? 0,
  };
}

const UNIT_MS = { m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** `90m`, `12h`, `30d` -> milliseconds; undefined when it is not one (or is zero, or over 10 years). */
export function parseDuration(text: string): number | undefined {
  const match = /^([1-9][0-9]{0,6})([mhd])$/.exec(text.trim());
  if (!match) return undefined;
  const ms = Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS];
  return ms <= 3650 * UNIT_MS.d ? ms : undefined;
}

/** Whether `wallet` is one of a key's wallets: EVM addresses compare case-insensitively. */
export function walletAllowed(wallets: readonly string[], wallet: string): boolean {
  const norm = (w: string) => (w.startsWith("0x") ? w.toLowerCase() : w);
  const target = norm(wallet);
  return wallets.some((w) => norm(w) === target);
}
