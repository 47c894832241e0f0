import type { KeyEnd, KeyGrant } from "../payments/index.js";
import { grantOf, hashToken, type KeyRecord, type KeyScope, keyStatus } from "./keys.js";
import type { OperatorStore, PauseRecord } from "./port.js";

/**
 * Each instance's copy of the keys and pauses, read whole from the store every `intervalMs`
 * (default 500 ms), so that auth and the pause check answer from memory and a change made on any
 * instance (or by the CLI straight to the store) holds everywhere within about a second
 * (docs/deploy.md#operating-it). A failed read keeps the last copy and is reported.
 */

export type KeyLookup =
  | { kind: "none" }
  | { kind: "revoked" | "expired" | "rotated"; name: string }
  | { kind: "active"; name: string; scopes: readonly KeyScope[]; grant: KeyGrant };

/** Who asks whether payments are paused for them: the payer's caller (a key's name, or another identity). */
export interface PauseCheck {
  /** The pause that holds for this caller now (all first), if any. */
  pausedFor(caller: string | undefined): PauseRecord | undefined;
}

/** How often each instance reads the keys and pauses (docs/deploy.md, "Operating it"). */
export const OPERATOR_REFRESH_MS = 500;

/**
 * How long a change that takes something away (a pause, a revoke, a rotate's old token) waits
 * before it answers, wherever it is made: two of every instance's refreshes and a margin, so once
 * it has answered no instance signs anew.
 */
export const PROPAGATION_MS = 2 * OPERATOR_REFRESH_MS + 100;

export interface OperatorCacheOptions {
  intervalMs?: number;
  now?: () => Date;
  /** A timed read failed: the first of a run, then about once a minute (`failures` so far). */
  onError?: (error: unknown, failures: number) => void;
  /** A timed read succeeded after `failures` failed ones. */
  onRecovered?: (failures: number) => void;
}

export class OperatorCache implements PauseCheck {
  private byHash = new Map<string, KeyRecord>();
  /** A rotated key's old tokens (their hashes) -> the key's name. */
  private retired = new Map<string, string>();
  private pauses: PauseRecord[] = [];
  private timer: ReturnType<typeof setInterval> | undefined;
  private refreshing: Promise<void> | undefined;
  /** Timed reads failed in a row. */
  private failures = 0;
  /** The read that follows the one under way, for the calls made during it. */
  private queued: Promise<void> | undefined;
  private readonly now: () => Date;

  constructor(
    private readonly store: OperatorStore,
    private readonly options: OperatorCacheOptions = {},
  ) {
    this.now = options.now ?? (() => new Date());
  }

  /**
   * Read the keys and pauses now: resolves once a read that began after this call has ended, so a
   * change made before it is seen (a revoke, then `refresh()`, never answers from an older read).
   * One read at a time: a call during one waits for it, then for one more read, which every call
   * made meanwhile shares.
   */
  refresh(): Promise<void> {
    if (!this.refreshing) {
      this.refreshing = this.read();
      return this.refreshing;
    }
    this.queued ??= this.refreshing
      .catch(() => undefined)
      .then(() => {
        this.queued = undefined;
        return this.refresh();
      });
    return this.queued;
  }

  private async read(): Promise<void> {
    try {
      const [keys, pauses] = await Promise.all([this.store.listKeys(), this.store.listPauses()]);
      this.byHash = new Map(keys.map((k) => [k.tokenHash, k]));
      this.retired = new Map(keys.flatMap((k) => (k.retiredHashes ?? []).map((h) => [h, k.name] as const)));
      this.pauses = pauses;
    } finally {
      this.refreshing = undefined;
    }
  }

  /** Refresh every `intervalMs` until {@link stop}; the timer never holds the process open. */
  start(): void {
    if (this.timer) return;
    const interval = this.options.intervalMs ?? OPERATOR_REFRESH_MS;
    // A store that is down fails every read: said at the first, then about once a minute, and
    // once more when a read succeeds again (not twice a second for as long as it lasts).
    const every = Math.max(1, Math.round(60_000 / interval));
    this.timer = setInterval(() => {
      this.refresh().then(
        () => {
          if (this.failures > 0) this.options.onRecovered?.(this.failures);
          this.failures = 0;
        },
        (error: unknown) => {
          this.failures += 1;
          if (this.failures === 1 || this.failures % every === 0)
            this.options.onError?.(error, this.failures);
        },
      );
    }, interval);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** The key a bearer token names, by its hash. */
  lookup(token: string): KeyLookup {
    const hash = hashToken(token);
    const key = this.byHash.get(hash);
    const rotated = this.retired.get(hash);
    if (!key) return rotated === undefined ? { kind: "none" } : { kind: "rotated", name: rotated };
    const status = keyStatus(key, this.now());
    if (status !== "active") return { kind: status, name: key.name };
    return { kind: "active", name: key.name, scopes: key.scopes, grant: grantOf(key) };
  }

  /** How many pauses hold now (all, and per key): the `x402_paused_scopes` gauge. */
  get pausedScopes(): number {
    return this.pauses.length;
  }

  keyEnded(caller: string, generation?: number): KeyEnd | undefined {
    for (const key of this.byHash.values()) {
      if (key.name !== caller) continue;
      const status = keyStatus(key, this.now());
      if (status !== "active") return status;
      const rotated = generation !== undefined && (key.retiredHashes?.length ?? 0) > generation;
      return rotated ? "rotated" : undefined;
    }
    return undefined;
  }

  pausedFor(caller: string | undefined): PauseRecord | undefined {
    return (
      this.pauses.find((p) => p.scope === "all") ??
      (caller === undefined ? undefined : this.pauses.find((p) => p.scope === "key" && p.key === caller))
    );
  }
}
