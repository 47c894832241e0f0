import type { Chains } from "../../chains/index.js";
import type { SafeFetch, SafeResponse } from "../../outbound/index.js";
import type { Ledger, PaymentRecord } from "../ports/index.js";
import type { PaymentOutcome, Unclear } from "../rules/index.js";
import { unclearReason } from "../rules/index.js";
import { paymentRejection, readSettlement, type Target } from "../x402/index.js";
import type { Reconciler } from "./reconciler.js";
import type { PaymentRun } from "./run.js";

/** How long an unclear payment's immediate check on chain may hold the stream, by default. */
export const DEFAULT_RESOLVE_NOW_MS = 5000;

export interface DeliveryDeps {
  fetch: SafeFetch;
  ledger: Pick<Ledger, "get">;
  reconciler: Pick<Reconciler, "resolve">;
  /** Where a paid service's word that the payment settled is checked before it is recorded. */
  chains: Pick<Chains, "confirm">;
  /** Time bound of the paid request. */
  serviceTimeoutMs: number;
  /** Bound of the immediate check on chain of an unclear payment (default DEFAULT_RESOLVE_NOW_MS). */
  resolveNowMs?: number;
}

/**
 * The last steps of every payment, signed by a server key or approved in the user's wallet
 * (docs/payments.md, "The pipeline, step by step"): send the paid request and record what came of
 * it, settled with the service's answer, or unclear (counted as spent, never signed again, asked of
 * the chain once now). The run's row is `submitted` with its intent before this is called. The
 * settlement a service reports is its word: it is recorded only once the chain shows that
 * transaction carrying this payment's authorization (a service could name any transaction).
 */
export async function deliver(
  deps: DeliveryDeps,
  run: PaymentRun,
  payee: Target,
  headers: Record<string, string>,
): Promise<PaymentOutcome> {
  const response = await sendPaid(deps, payee, headers);
  const settlement = response ? readSettlement((n) => response.headers.get(n)) : undefined;
  let unclear: Unclear | undefined;
  if (response && response.status >= 200 && response.status < 300 && settlement?.success) {
    const onChain = { ...run.facts, authorization: run.intent };
    const checked = await deps.chains.confirm(onChain, settlement.transaction);
    if (checked === "unchecked") {
      const payer = settlement.payer ? { payer: settlement.payer } : {};
      return run.settled({ transaction: settlement.transaction, ...payer }, response);
    }
    if (checked !== "unconfirmed")
      return run.settled({ transaction: settlement.transaction, ...checked }, response);
    unclear = {
      reason: "no_settlement_proof",
      message:
        "The service said the payment settled, but the chain does not show that transaction as this payment.",
      detail: `HTTP ${response.status} with a settlement response not confirmed on chain`,
    };
  }
  // Anything else after sending is unclear: it counts as spent, is never signed again, and the
  // reconciler resolves it from the chain (asked once right now, bounded in time).
  unclear ??= unclearReason(
    response && {
      status: response.status,
      ...(response.status === 402 ? { rejection: paymentRejection(response) } : {}),
    },
  );
  await run.unclear(unclear);
  return run.finishUnclear(unclear, await resolveSoon(deps, run.paymentId), response);
}

/**
 * The paid request goes to the URL that issued the demand and nowhere else: a redirect to another
 * origin comes back as the (unclear) answer instead of being followed. Deliberately not the
 * client's signal: a payment in flight finishes and is recorded.
 */
async function sendPaid(
  deps: DeliveryDeps,
  payee: Target,
  headers: Record<string, string>,
): Promise<SafeResponse | undefined> {
  const origin = new URL(payee.url).origin;
  try {
    return await deps.fetch(payee.url, {
      method: payee.method,
      headers: { ...headers, ...(payee.body ? { "content-type": "application/json" } : {}) },
      ...(payee.body ? { body: payee.body } : {}),
      signal: AbortSignal.timeout(deps.serviceTimeoutMs),
      allowOrigin: (next) => next === origin,
      followCrossOrigin: false,
    });
  } catch {
    return undefined;
  }
}

/**
 * Ask the reconciler once, bounded in time (the stream has a deadline). If the background sweep
 * resolved the row first, the transition race is lost harmlessly: read what it recorded.
 */
async function resolveSoon(deps: DeliveryDeps, paymentId: string): Promise<PaymentRecord | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), deps.resolveNowMs ?? DEFAULT_RESOLVE_NOW_MS);
  });
  try {
    return await Promise.race([
      deps.reconciler.resolve(paymentId).catch(() => deps.ledger.get(paymentId)),
      timeout,
    ]);
  } catch {
    return undefined;
  } finally {
    clearTimeout(timer);
  }
}
