import { parseAddress } from "../chains/index.js";
import { AppError, type FieldError } from "../errors/index.js";
import { parseUsd } from "../money/index.js";
import type { PauseTarget } from "../protocol/operator.js";
import { KEY_NAME, KEY_SCOPES, type KeyRecord, type KeyScope, parseDuration } from "./keys.js";

/** The operator's input, checked: a new key's fields, a pause's scope and reason (plane.ts). */

export type { PauseTarget } from "../protocol/operator.js";

export const REASON_MAX_CHARS = 500;

/**
 * The largest cap a key takes: a trillion USD. The store keeps caps as 64-bit atomic units, and
 * parseUsd takes up to 15 whole digits, so a larger one would fail there (a 500), not here.
 */
export const KEY_CAP_MAX_ATOMIC = 10n ** 18n;

/**
 * C0 and C1 controls, DEL, the line separators, the bidirectional overrides, isolates and marks,
 * and invisible characters (zero-width space, word joiner and invisible operators, the byte-order
 * mark): a reason is one line of text that reads as it is stored (a terminal and the operator page
 * print it). The zero-width joiner and non-joiner stay: emoji and some scripts need them.
 */
const CONTROL =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
  /[\u0000-\u001f\u007f-\u009f\u061c\u180e\u200b\u200e\u200f\u2028-\u202e\u2060-\u2069\ufeff]/;

function field(fields: FieldError[], path: string, message: string): void {
  fields.push({ path, message });
}

function amount(fields: FieldError[], path: string, value: unknown): bigint | null {
  if (value === undefined || value === null) return null;
  const parsed = parseUsd(value);
  if (!parsed.ok) {
    field(fields, path, parsed.reason);
    return null;
  }
  if (parsed.atomic > KEY_CAP_MAX_ATOMIC) {
    field(fields, path, "must be at most 1000000000000");
    return null;
  }
  return parsed.atomic;
}

function walletsOf(fields: FieldError[], value: unknown): string[] | null {
  if (value === undefined || value === null) return null;
  if (!Array.isArray(value) || value.length === 0 || value.length > 100) {
    field(fields, "wallets", "a list of 1 to 100 wallet addresses");
    return null;
  }
  return value.map((w, i) => {
    const parsed = typeof w === "string" ? parseAddress(w.trim()) : undefined;
    if (parsed?.ok) return parsed.address;
    field(fields, `wallets.${i}`, parsed ? parsed.reason : "a wallet address");
    return "";
  });
}

function scopesOf(fields: FieldError[], value: unknown): KeyScope[] {
  if (value === undefined || value === null) return [...KEY_SCOPES];
  const valid = Array.isArray(value) && value.length > 0;
  const bad = !valid || value.some((s) => !(KEY_SCOPES as readonly unknown[]).includes(s));
  if (bad) field(fields, "scopes", `one or more of ${KEY_SCOPES.join(", ")}`);
  return bad ? [] : [...new Set(value as KeyScope[])];
}

/** A key record from the operator's input, or 400 `invalid_request` naming each bad field. */
const KEY_FIELDS = new Set([
  "name",
  "expiresIn",
  "scopes",
  "wallets",
  "perTransaction",
  "perRequest",
  "daily",
]);

export function keyFromInput(input: unknown, tokenHash: string, by: string, now: Date): KeyRecord {
  const body = (typeof input === "object" && input !== null ? input : {}) as Record<string, unknown>;
  const fields: FieldError[] = [];
  // An unknown field (a misspelt cap, `isAdmin`) is refused, never silently dropped.
  for (const unknown of Object.keys(body).filter((k) => !KEY_FIELDS.has(k)))
    field(fields, unknown.slice(0, 64), "not a field of a key");
  const name = typeof body.name === "string" ? body.name : "";
  if (!KEY_NAME.test(name)) field(fields, "name", "1-64 letters, digits, '.', '_' or '-'");
  let expiresAt: Date | null = null;
  if (body.expiresIn !== undefined) {
    const ms = typeof body.expiresIn === "string" ? parseDuration(body.expiresIn) : undefined;
    if (ms === undefined) field(fields, "expiresIn", "a duration such as 90m, 12h or 30d");
    else expiresAt = new Date(now.getTime() + ms);
  }
  const key: KeyRecord = {
    name,
    tokenHash,
    scopes: scopesOf(fields, body.scopes),
    wallets: walletsOf(fields, body.wallets),
    perTransaction: amount(fields, "perTransaction", body.perTransaction),
    perRequest: amount(fields, "perRequest", body.perRequest),
    daily: amount(fields, "daily", body.daily),
    createdAt: now,
    createdBy: by,
    expiresAt,
    revokedAt: null,
  };
  if (fields.length > 0) {
    const what = fields.map((f) => `${f.path}: ${f.message}`).join("; ");
    throw new AppError("invalid_request", `The key is not valid (${what}).`, { fields });
  }
  return key;
}

export function reasonOf(value: unknown): string {
  const reason = typeof value === "string" ? value.trim() : "";
  // Counted in characters (code points), not UTF-16 units: an emoji is one.
  const chars = [...reason].length;
  if (!reason || chars > REASON_MAX_CHARS || CONTROL.test(reason) || !reason.isWellFormed())
    throw new AppError(
      "invalid_request",
      `Say why, in one line of 1 to ${REASON_MAX_CHARS} characters without control characters (reason).`,
      { fields: [{ path: "reason", message: "1 to 500 printable characters" }] },
    );
  return reason;
}

/** `{ all: true }` or `{ key }` (a key's name as KEY_NAME allows it), from a body. */
export function pauseTargetOf(body: unknown): PauseTarget {
  const b = (typeof body === "object" && body !== null ? body : {}) as Record<string, unknown>;
  if (b.all === true && b.key === undefined) return { all: true };
  if (typeof b.key === "string" && KEY_NAME.test(b.key) && b.all === undefined) return { key: b.key };
  throw new AppError("invalid_request", "Name the scope: { all: true } or { key: NAME }.", {
    fields: [{ path: "key", message: "either all: true or a key's name" }],
  });
}
