import type { ChainReader } from "./chain.js";
import type { Ledger, PaymentRecord } from "./ledger.js";
import type { LedgerStatus } from "./state.js";
import { solanaMessageHash } from "./x402.js";

/**
 * Resolves payments whose outcome is unclear (money-safety promises 4-6). An `unknown` payment
 * counts as spent until the chain says otherwise:
 *  - EVM (EIP-3009): the authorization's nonce used on chain -> settled (with the transaction);
 *    unused after `validBefore` -> failed (it can never be used any more).
 *  - Solana: a landed transaction with the same message -> settled; none after the offer's
 *    timeout (the blockhash has expired by then) -> failed.
 * Rows left `signed` or `submitted` by a crashed process are moved to `unknown` first.
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
  chain: ChainReader;
  rpcUrls: Record<string, string>;
  /** signed/submitted rows older than this belong to a dead attempt. */
  staleMs: number;
  now?: () => Date;
  onError?: (error: unknown) => void;
}

interface EvmAuthorization {
  kind: "evm-eip3009";
  from: string;
  nonce: string;
  validBefore: string;
}
interface SvmAuthorization {
  kind: "svm-exact";
  expiresAt: string;
  messageHash?: string;
}

function authorizationOf(record: PaymentRecord): EvmAuthorization | SvmAuthorization | undefined {
  const a = record.authorization as {
    kind?: string;
    from?: string;
    nonce?: string;
    validBefore?: string;
    expiresAt?: string;
  } | null;
  if (a?.kind === "evm-eip3009" && a.from && a.nonce && a.validBefore) return a as EvmAuthorization;
  if (a?.kind === "svm-exact" && a.expiresAt) return a as SvmAuthorization;
  return undefined;
}

export function createReconciler(options: ReconcilerOptions): Reconciler {
  const { ledger, chain } = options;
  const now = options.now ?? (() => new Date());
  let timer: ReturnType<typeof setInterval> | undefined;
  let running: Promise<unknown> = Promise.resolve();

  const move = (id: string, to: LedgerStatus, fields: Parameters<Ledger["transition"]>[2]) =>
    ledger.transition(id, to, fields, now());

  async function findSolanaTransaction(record: PaymentRecord, hash: string): Promise<string | null> {
    const url = options.rpcUrls[record.network];
    if (!url) return null;
    const rpc = async <T>(method: string, params: unknown[]): Promise<T | undefined> => {
      const response = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
        signal: AbortSignal.timeout(5000),
      });
      return ((await response.json()) as { result?: T }).result;
    };
    const signatures =
      (await rpc<Array<{ signature: string }>>("getSignaturesForAddress", [record.wallet, { limit: 50 }])) ??
      [];
    for (const { signature } of signatures) {
      const tx = await rpc<{ transaction: [string, string] }>("getTransaction", [
        signature,
        { encoding: "base64", maxSupportedTransactionVersion: 0, commitment: "confirmed" },
      ]);
      const wire = tx?.transaction?.[0];
      if (wire && solanaMessageHash(Buffer.from(wire, "base64")) === hash) return signature;
    }
    return null;
  }

  async function resolveRecord(record: PaymentRecord): Promise<PaymentRecord> {
    let current = record;
    if (current.status === "signed" || current.status === "submitted") {
      current = await move(current.paymentId, "unknown", { error: "attempt ended without an outcome" });
    }
    if (current.status !== "unknown") return current;
    const auth = authorizationOf(current);
    if (!auth) return current;
    if (auth.kind === "evm-eip3009") {
      const use = await chain.evmAuthorizationUse(current.network, current.asset, auth.from, auth.nonce);
      if (use.used) {
        return move(current.paymentId, "settled", {
          ...(use.txHash ? { txHash: use.txHash } : {}),
          payer: auth.from,
        });
      }
      const chainNow = await chain.evmNow(current.network);
      if (chainNow > BigInt(auth.validBefore)) {
        return move(current.paymentId, "failed", { error: "authorization expired unused" });
      }
      return current;
    }
    const found = auth.messageHash ? await findSolanaTransaction(current, auth.messageHash) : null;
    if (found) return move(current.paymentId, "settled", { txHash: found, payer: current.wallet });
    if (auth.messageHash && now().getTime() / 1000 > Number(auth.expiresAt)) {
      return move(current.paymentId, "failed", { error: "transaction expired without landing" });
    }
    return current;
  }

  const reconciler: Reconciler = {
    async resolve(paymentId) {
      const record = await ledger.get(paymentId);
      return record ? resolveRecord(record) : undefined;
    },
    async sweep() {
      const cutoff = now().getTime() - options.staleMs;
      const rows = await ledger.listByStatus(["reserved", "unknown", "signed", "submitted"]);
      let resolved = 0;
      let unresolved = 0;
      for (const row of rows) {
        if (row.status !== "unknown" && row.updatedAt.getTime() > cutoff) continue;
        if (row.status === "reserved") {
          // Reserved by an attempt that died before signing: nothing can be paid with it.
          await move(row.paymentId, "released", { error: "attempt ended before signing" }).catch(
            (e: unknown) => options.onError?.(e),
          );
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
