import type { Chains } from "../../chains/index.js";
import {
  type Ledger,
  type PaymentEvents,
  PaymentNotFoundError,
  type PaymentRecord,
  type TransitionFields,
} from "../ports/index.js";
import { IllegalTransitionError, type LedgerStatus, UNRESOLVED_STATUSES } from "../rules/index.js";
import { tell } from "./events.js";

/**
 * Resolves payments whose outcome is unclear (docs/payments.md, "Reconciliation"). An `unknown` payment
 * counts as spent until the chain says otherwise:
 *  - EVM (EIP-3009): the authorization's nonce used on chain -> settled (with the transaction);
 *    unused after `validBefore` -> failed (it can never be used any more).
 *  - Solana: a landed transaction with the same message, found in the payer's whole history since
 *    signing -> settled; none, and the chain holds its blockhash expired -> failed.
 * Anything uncertain leaves the payment `unknown` (counted as spent) for the next pass.
 * Rows left `signed` or `submitted` by a crashed process are moved to `unknown` first, and
 * payments whose approval window passed while waiting for the user's wallet become `expired`.
 */
export interface Reconciler {
  /** Try to resolve one payment now; returns its record afterwards. */
  resolve(paymentId: string): Promise<PaymentRecord | undefined>;
  /** Resolve everything unclear; `stale` rows (signed/submitted) older than `staleMs` are included. */
  sweep(): Promise<{ resolved: number; unresolved: number }>;
  /** Sweep every `intervalMs` until stop(). */
  start(intervalMs: number): void;
  stop(): void;
}

export interface ReconcilerOptions {
  ledger: Ledger;
  chains: Pick<Chains, "resolve">;
  /** signed/submitted rows older than this belong to a dead attempt. */
  staleMs: number;
  now?: () => Date;
  onError?: (error: unknown) => void;
  /** Told every move the reconciler makes (`reconciled`, ports/events.ts); never waited on. */
  events?: PaymentEvents;
}

type Move = (row: PaymentRecord, to: LedgerStatus, fields: TransitionFields) => Promise<void>;

/** A reconciler's move of a row, told as a `reconciled` event once the ledger took it. */
function mover(ledger: Ledger, now: () => Date, events: PaymentEvents | undefined): Move {
  return async (row, to, fields) => {
    await ledger.transition(row.paymentId, to, fields, now());
    tell(events, () => ({
      kind: "reconciled",
      at: now(),
      paymentId: row.paymentId,
      from: row.status,
      to,
      ...(fields.txHash ? { txHash: fields.txHash } : {}),
      payment: { network: row.network, amount: row.amount, caller: row.caller, scopeId: row.scopeId },
    }));
  };
}

/** Rethrows anything but a refused move: the row was moved by another process meanwhile. */
function movedMeanwhile(error: unknown): void {
  if (!(error instanceof IllegalTransitionError)) throw error;
}

/** Approvals the wallet never gave in time: nothing was signed, nothing can be paid. */
async function expireLapsedApprovals(
  ledger: Ledger,
  transition: Move,
  now: () => Date,
  onError: ((error: unknown) => void) | undefined,
): Promise<void> {
  for (const row of await ledger.listByStatus(["awaiting_approval"])) {
    if (row.expiresAt && row.expiresAt.getTime() <= now().getTime()) {
      await transition(row, "expired", { error: "approval window passed" })
        .catch(movedMeanwhile)
        .catch((e: unknown) => onError?.(e));
    }
  }
}

export function createReconciler(options: ReconcilerOptions): Reconciler {
  const { ledger, chains } = options;
  const now = options.now ?? (() => new Date());
  let timer: ReturnType<typeof setInterval> | undefined;
  let running: Promise<unknown> = Promise.resolve();
  const transition = mover(ledger, now, options.events);

  /**
   * Move a row and read it back as it now stands. A row another process moved first (another
   * instance's reconciler, the payment's own run) is taken as it now stands: a race, not a bug.
   */
  const move = async (from: PaymentRecord, to: LedgerStatus, fields: TransitionFields) => {
    await transition(from, to, fields).catch(movedMeanwhile);
    const row = await ledger.get(from.paymentId);
    if (!row) throw new PaymentNotFoundError(from.paymentId);
    return row;
  };

  async function resolveRecord(record: PaymentRecord): Promise<PaymentRecord> {
    let current = record;
    if (current.status === "signed" || current.status === "submitted") {
      current = await move(current, "unknown", { error: "attempt ended without an outcome" });
    }
    if (current.status !== "unknown") return current;
    // The payment's chain family reads the chain (src/chains: evm.ts, svm.ts).
    const verdict = await chains.resolve(current, now());
    if (verdict.status === "settled") {
      return move(current, "settled", {
        ...(verdict.txHash ? { txHash: verdict.txHash } : {}),
        payer: verdict.payer,
      });
    }
    if (verdict.status === "failed") return move(current, "failed", { error: verdict.error });
    return current;
  }

  const reconciler: Reconciler = {
    async resolve(paymentId) {
      const record = await ledger.get(paymentId);
      return record ? resolveRecord(record) : undefined;
    },
    async sweep() {
      await expireLapsedApprovals(ledger, transition, now, options.onError);
      const cutoff = now().getTime() - options.staleMs;
      const rows = await ledger.listByStatus(UNRESOLVED_STATUSES);
      let resolved = 0;
      let unresolved = 0;
      for (const row of rows) {
        if (row.status !== "unknown" && row.updatedAt.getTime() > cutoff) continue;
        if (row.status === "reserved") {
          // Reserved by an attempt that died before signing: nothing can be paid with it.
          await transition(row, "released", { error: "attempt ended before signing" })
            .catch(movedMeanwhile)
            .catch((e: unknown) => options.onError?.(e));
          resolved++;
          continue;
        }
        try {
          const after = await resolveRecord(row);
          if (after.status === "settled" || after.status === "failed") resolved++;
          else unresolved++;
        } catch (error) {
          unresolved++;
          options.onError?.(error);
        }
      }
      return { resolved, unresolved };
    },
    start(intervalMs) {
      timer = setInterval(() => {
        running = running.then(() => reconciler.sweep()).catch((e: unknown) => options.onError?.(e));
      }, intervalMs);
      timer.unref();
    },
    stop() {
      if (timer) clearInterval(timer);
    },
  };
  return reconciler;
}
