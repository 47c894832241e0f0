import { parseAddress } from "../chains/index.js";
import { AppError, type FieldError } from "../errors/index.js";
import { formatUsd, parseUsd } from "../money/index.js";
import {
  hashToken,
  KEY_NAME,
  KEY_SCOPES,
  type KeyRecord,
  type KeyScope,
  type KeyStatus,
  keyStatus,
  newToken,
  parseDuration,
} from "./keys.js";
import type { OperatorPaymentRow, OperatorStore, PauseRecord } from "./port.js";

/**
 * The operator's controls (docs/deploy.md#operating-it): keys and pauses, as the operator API
 * (src/http/operator.ts) and the CLI straight to the store (src/cli/operator) both use them. Every
 * change is told to `onChange` (the audit trail), never with a token.
 */

export interface KeyLimitsView {
  perTransaction: string | null;
  perRequest: string | null;
  daily: string | null;
}

export interface KeyView {
  name: string;
  scopes: KeyScope[];
  wallets: string[] | null;
  limits: KeyLimitsView;
  status: KeyStatus;
  createdAt: string;
  expiresAt: string | null;
  revokedAt: string | null;
  spentTodayUsd: string;
}

export interface PauseView {
  scope: "all" | "key";
  key?: string;
  reason: string;
  since: string;
  by: string;
}

/** A payment as GET /api/operator/payments and /unclear show it. */
export interface OperatorPayment {
  paymentId: string;
  caller: string | null;
  wallet: string;
  service: string;
  network: string;
  amountUsd: string;
  status: string;
  createdAt: string;
  updatedAt: string;
  txHash: string | null;
}

/** Sent, not known yet: what an operator looks at first after an incident. */
export const UNCLEAR_STATUSES = ["unknown", "signed", "submitted"] as const;

const DAY_MS = 86_400_000;

function paymentView(row: OperatorPaymentRow): OperatorPayment {
  return {
    paymentId: row.paymentId,
    caller: row.caller,
    wallet: row.wallet,
    service: row.service,
    network: row.network,
    amountUsd: formatUsd(row.amount),
    status: row.status,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    txHash: row.txHash,
  };
}

export type PauseTarget = { all: true } | { key: string };

export interface OperatorEvent {
  kind: "key.created" | "key.revoked" | "key.rotated" | "pause.set" | "pause.cleared";
  at: Date;
  by: string;
  key?: string;
  scope?: "all" | "key";
  reason?: string;
  limits?: KeyLimitsView & { wallets: string[] | null; scopes: KeyScope[]; expiresAt: string | null };
}

/** `POST /api/operator/keys`'s body, and `keys create`'s options. */
export interface CreateKeyInput {
  name: string;
  perTransaction?: string;
  perRequest?: string;
  daily?: string;
  wallets?: string[];
  expiresIn?: string;
  scopes?: string[];
}

export interface ControlPlaneDeps {
  store: OperatorStore;
  now?: () => Date;
  /** What a key committed in the last 24 h; default the store's sum over the key's payments. */
  spentToday?: (name: string, now: Date) => Promise<bigint>;
  /** After each change: refresh this instance's cache at once (others refresh on their timer). */
  afterChange?: () => Promise<void>;
  onChange?: (event: OperatorEvent) => void;
}

export const REASON_MAX_CHARS = 500;

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
export function keyFromInput(input: unknown, tokenHash: string, by: string, now: Date): KeyRecord {
  const body = (typeof input === "object" && input !== null ? input : {}) as Record<string, unknown>;
  const fields: FieldError[] = [];
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

const usdOrNull = (v: bigint | null) => (v === null ? null : formatUsd(v));

export function limitsView(key: KeyRecord): KeyLimitsView {
  return {
    perTransaction: usdOrNull(key.perTransaction),
    perRequest: usdOrNull(key.perRequest),
    daily: usdOrNull(key.daily),
  };
}

export function pauseView(p: PauseRecord): PauseView {
  return {
    scope: p.scope,
    ...(p.key ? { key: p.key } : {}),
    reason: p.reason,
    since: p.since.toISOString(),
    by: p.by,
  };
}

function reasonOf(value: unknown): string {
  const reason = typeof value === "string" ? value.trim() : "";
  if (!reason || reason.length > REASON_MAX_CHARS)
    throw new AppError("invalid_request", `Say why, in 1 to ${REASON_MAX_CHARS} characters (reason).`, {
      fields: [{ path: "reason", message: "required" }],
    });
  return reason;
}

/** `{ all: true }` or `{ key }`, from a body. */
export function pauseTargetOf(body: unknown): PauseTarget {
  const b = (typeof body === "object" && body !== null ? body : {}) as Record<string, unknown>;
  if (b.all === true && b.key === undefined) return { all: true };
  if (typeof b.key === "string" && b.all === undefined) return { key: b.key };
  throw new AppError("invalid_request", "Name the scope: { all: true } or { key: NAME }.", {
    fields: [{ path: "key", message: "either all: true or a key's name" }],
  });
}

export class ControlPlane {
  private readonly now: () => Date;

  constructor(private readonly deps: ControlPlaneDeps) {
    this.now = deps.now ?? (() => new Date());
  }

  private async view(key: KeyRecord, now: Date): Promise<KeyView> {
    const spent = this.deps.spentToday
      ? await this.deps.spentToday(key.name, now)
      : await this.deps.store.committedSince(key.name, new Date(now.getTime() - DAY_MS));
    return {
      name: key.name,
      scopes: key.scopes,
      wallets: key.wallets,
      limits: limitsView(key),
      status: keyStatus(key, now),
      createdAt: key.createdAt.toISOString(),
      expiresAt: key.expiresAt?.toISOString() ?? null,
      revokedAt: key.revokedAt?.toISOString() ?? null,
      spentTodayUsd: formatUsd(spent),
    };
  }

  private async changed(event: OperatorEvent): Promise<void> {
    await this.deps.afterChange?.();
    try {
      this.deps.onChange?.(event);
    } catch {
      // The watcher's failure is its own: the change is made.
    }
  }

  async listKeys(): Promise<KeyView[]> {
    const now = this.now();
    const keys = await this.deps.store.listKeys();
    keys.sort((a, b) => a.name.localeCompare(b.name));
    return Promise.all(keys.map((k) => this.view(k, now)));
  }

  /** A new key and its token (shown this once); 409 `key_exists` when the name is taken. */
  async createKey(input: unknown, by: string): Promise<{ key: KeyView; token: string }> {
    const now = this.now();
    const token = newToken();
    const key = keyFromInput(input, hashToken(token), by, now);
    if (!(await this.deps.store.createKey(key)))
      throw new AppError("key_exists", `A key named ${key.name} exists (revoke or rotate it instead).`);
    const view = await this.view(key, now);
    await this.changed({
      kind: "key.created",
      at: now,
      by,
      key: key.name,
      limits: { ...view.limits, wallets: key.wallets, scopes: key.scopes, expiresAt: view.expiresAt },
    });
    return { key: view, token };
  }

  async revokeKey(name: string, by: string): Promise<KeyView> {
    const now = this.now();
    const key = await this.deps.store.revokeKey(name, now);
    if (!key) throw new AppError("not_found", `No key named ${name}.`);
    await this.changed({ kind: "key.revoked", at: now, by, key: name });
    return this.view(key, now);
  }

  /** A new token for the key (the old one stops working); a revoked key cannot be rotated. */
  async rotateKey(name: string, by: string): Promise<{ key: KeyView; token: string }> {
    const now = this.now();
    const existing = (await this.deps.store.listKeys()).find((k) => k.name === name);
    if (!existing) throw new AppError("not_found", `No key named ${name}.`);
    if (existing.revokedAt)
      throw new AppError("invalid_request", `The key ${name} is revoked; create a new key instead.`);
    const token = newToken();
    const key = await this.deps.store.rotateKey(name, hashToken(token), now);
    if (!key) throw new AppError("not_found", `No key named ${name}.`);
    await this.changed({ kind: "key.rotated", at: now, by, key: name });
    return { key: await this.view(key, now), token };
  }

  async listPauses(): Promise<PauseView[]> {
    return (await this.deps.store.listPauses()).map(pauseView);
  }

  /** Pause payments for everyone or for one key (404 for a key that does not exist). */
  async pause(target: PauseTarget, reasonInput: unknown, by: string): Promise<PauseView[]> {
    const now = this.now();
    const reason = reasonOf(reasonInput);
    if ("key" in target && !(await this.deps.store.listKeys()).some((k) => k.name === target.key))
      throw new AppError("not_found", `No key named ${target.key}.`);
    const scope = "all" in target ? "all" : "key";
    const key = "key" in target ? target.key : null;
    await this.deps.store.setPause({ scope, key, reason, by, since: now });
    await this.changed({ kind: "pause.set", at: now, by, scope, reason, ...(key ? { key } : {}) });
    return this.listPauses();
  }

  /** Lift the pause of that scope (nothing to lift is not an error). */
  async resume(target: PauseTarget, by: string): Promise<PauseView[]> {
    const now = this.now();
    const scope = "all" in target ? "all" : "key";
    const key = "key" in target ? target.key : null;
    if (await this.deps.store.clearPause(scope, key))
      await this.changed({ kind: "pause.cleared", at: now, by, scope, ...(key ? { key } : {}) });
    return this.listPauses();
  }

  /** The latest payments, newest first (1 to 500). */
  async payments(limit: number): Promise<OperatorPayment[]> {
    return (await this.deps.store.payments({ limit })).map(paymentView);
  }

  /** Payments sent whose outcome is not known yet, newest first. */
  async unclear(): Promise<OperatorPayment[]> {
    return (await this.deps.store.payments({ limit: 500, statuses: UNCLEAR_STATUSES })).map(paymentView);
  }
}
