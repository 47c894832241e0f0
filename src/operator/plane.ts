import { AppError } from "../errors/index.js";
import { formatUsd } from "../money/index.js";
import type { KeyLimitsView, KeyView, OperatorPayment, PauseView } from "../protocol/operator.js";
import { statusAt } from "../protocol/status.js";
import { keyFromInput, type PauseTarget, reasonOf } from "./input.js";
import { hashToken, type KeyRecord, type KeyScope, keyStatus, newToken } from "./keys.js";
import type { OperatorPaymentRow, OperatorStore, PauseRecord } from "./port.js";

export type { KeyLimitsView, KeyView, OperatorPayment, PauseView } from "../protocol/operator.js";
export { keyFromInput, type PauseTarget, pauseTargetOf } from "./input.js";

/**
 * The operator's controls (docs/deploy.md#operating-it): keys and pauses, as the operator API
 * (src/http/operator.ts) and the CLI straight to the store (src/cli/operator) both use them. Every
 * change is told to `onChange` (the audit trail), never with a token.
 */

/** Sent, not known yet: what an operator looks at first after an incident. */
export const UNCLEAR_STATUSES = ["unknown", "signed", "submitted"] as const;

const DAY_MS = 86_400_000;

/** A payment as the operator reads it: past its approval window, `expired` (`statusAt`). */
function paymentView(row: OperatorPaymentRow, now: Date): OperatorPayment {
  return {
    paymentId: row.paymentId,
    caller: row.caller,
    wallet: row.wallet,
    service: row.service,
    network: row.network,
    amountUsd: formatUsd(row.amount),
    status: statusAt(row.status, row.expiresAt, now),
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    txHash: row.txHash,
  };
}

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
  /**
   * How long every instance's cache takes to read a change (two of their refresh intervals and a
   * margin): a pause, a revoke and a rotate return only then, so once they answer no instance
   * signs anew for what they took away. Default 0.
   */
  propagationMs?: number;
  onChange?: (event: OperatorEvent) => void;
  /**
   * The other callers' names (AUTH_TOKENS' identities): a key may not take one, or it would read
   * that caller's payments and answer its approvals. `devnet` and `signer-N` are always taken.
   */
  callerNames?: Iterable<string>;
}

/**
 * Names no key takes: the devnet's caller, and the spend metric's own `caller` labels
 * (docs/deploy.md#traces-and-metrics), which a key so named would be counted with.
 */
const RESERVED_NAMES = new Set(["devnet", "anonymous", "jwt", "other"]);

/** Whether a key may not be called `name`: reserved, or another caller's identity (see `callerNames`). */
export function nameTaken(name: string, callerNames: ReadonlySet<string> = new Set()): boolean {
  // In any case: a key called "DEVNET" would read as the devnet's caller in the audit trail.
  const lower = name.toLowerCase();
  return RESERVED_NAMES.has(lower) || /^signer-[0-9]+$/.test(lower) || callerNames.has(name);
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

export class ControlPlane {
  private readonly now: () => Date;
  private readonly callerNames: ReadonlySet<string>;

  constructor(private readonly deps: ControlPlaneDeps) {
    this.now = deps.now ?? (() => new Date());
    this.callerNames = new Set(deps.callerNames ?? []);
  }

  private spentOf(name: string, now: Date): Promise<bigint> {
    return this.deps.spentToday
      ? this.deps.spentToday(name, now)
      : this.deps.store.committedSince(name, new Date(now.getTime() - DAY_MS));
  }

  private async view(key: KeyRecord, now: Date): Promise<KeyView> {
    return this.viewOf(key, now, await this.spentOf(key.name, now));
  }

  private viewOf(key: KeyRecord, now: Date, spent: bigint): KeyView {
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

  /**
   * A change is made: its record first (the audit trail, the log), then this instance's copy. A
   * copy that cannot be read now is read again by its timer; the change stands either way.
   */
  private async changed(event: OperatorEvent): Promise<void> {
    try {
      this.deps.onChange?.(event);
    } catch {
      // The watcher's failure is its own: the change is made.
    }
    await this.deps.afterChange?.().catch(() => {});
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
    if (nameTaken(key.name, this.callerNames))
      throw new AppError(
        "key_exists",
        `${key.name} is reserved or another caller's name (AUTH_TOKENS or the devnet's).`,
      );
    if (!(await this.deps.store.createKey(key)))
      throw new AppError(
        "key_exists",
        `A key named ${key.name} exists (rotate it for a new token, or revoke it; a revoked key's name is not used again).`,
      );
    // A new name has spent nothing: no read after the write that could lose its token.
    const view = this.viewOf(key, now, 0n);
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
    const spent = await this.spentOf(name, now); // read before the change: none can fail after it
    const key = await this.deps.store.revokeKey(name, now);
    if (!key) throw new AppError("not_found", `No key named ${name}.`);
    await this.changed({ kind: "key.revoked", at: now, by, key: name });
    // Once it answers, no instance takes the token (nor approves a payment it asked for).
    await this.propagated();
    return this.viewOf(key, now, spent);
  }

  /** A new token for the key (the old one stops working); a revoked key cannot be rotated. */
  async rotateKey(name: string, by: string): Promise<{ key: KeyView; token: string }> {
    const now = this.now();
    const existing = (await this.deps.store.listKeys()).find((k) => k.name === name);
    if (!existing) throw new AppError("not_found", `No key named ${name}.`);
    if (existing.revokedAt)
      throw new AppError("invalid_request", `The key ${name} is revoked; create a new key instead.`);
    const spent = await this.spentOf(name, now); // read first: the new token is never lost to it
    const token = newToken();
    const key = await this.deps.store.rotateKey(name, existing.tokenHash, hashToken(token), now);
    if (!key) {
      // Revoked since the read above (a revoke racing this rotate): refused as a revoked key is.
      // Else another rotation won: its token works, this one never would.
      const current = (await this.deps.store.listKeys()).find((k) => k.name === name);
      if (!current || current.revokedAt)
        throw new AppError("invalid_request", `The key ${name} is revoked; create a new key instead.`);
      throw new AppError(
        "invalid_request",
        `The key ${name} was rotated by another request at the same time: its token is the one that request answered with. Rotate again for a new one.`,
      );
    }
    await this.changed({ kind: "key.rotated", at: now, by, key: name });
    // Once it answers, the old token works on no instance.
    await this.propagated();
    // A rotation or a revoke made while it propagated ended this token: never answer with it. A
    // read that fails answers with it all the same (the rotation is made: its token not lost).
    const keys = await this.deps.store.listKeys().catch(() => undefined);
    const after = keys ? keys.find((k) => k.name === name) : key;
    if (after?.tokenHash !== key.tokenHash || after.revokedAt) {
      const why = after?.revokedAt ? "was revoked" : "was rotated again by another request";
      throw new AppError(
        "invalid_request",
        `The key ${name} ${why} as this rotation took effect: its token no longer works.`,
      );
    }
    return { key: this.viewOf(key, now, spent), token };
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
    await this.propagated();
    return this.listPauses();
  }

  /**
   * Wait until every instance's copy has surely read a change that takes something away (a pause,
   * a revoke, a rotate's old token): the change answers only then, so none of them signs anew.
   */
  private async propagated(): Promise<void> {
    const wait = this.deps.propagationMs ?? 0;
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  }

  /** Lift the pause of that scope (nothing to lift is not an error; a key nobody has is, as for pause). */
  async resume(target: PauseTarget, by: string): Promise<PauseView[]> {
    const now = this.now();
    const scope = "all" in target ? "all" : "key";
    const key = "key" in target ? target.key : null;
    if (await this.deps.store.clearPause(scope, key)) {
      await this.changed({ kind: "pause.cleared", at: now, by, scope, ...(key ? { key } : {}) });
      await this.propagated(); // as a pause: once it answers, every instance pays again
    } else if (key !== null && !(await this.deps.store.listKeys()).some((k) => k.name === key))
      throw new AppError("not_found", `No key named ${key}.`);
    return this.listPauses();
  }

  /** The latest payments, newest first (1 to 500). */
  async payments(limit: number): Promise<OperatorPayment[]> {
    const now = this.now();
    return (await this.deps.store.payments({ limit })).map((row) => paymentView(row, now));
  }

  /** Payments sent whose outcome is not known yet, newest first. */
  async unclear(): Promise<OperatorPayment[]> {
    const now = this.now();
    const rows = await this.deps.store.payments({ limit: 500, statuses: UNCLEAR_STATUSES });
    return rows.map((row) => paymentView(row, now));
  }
}
