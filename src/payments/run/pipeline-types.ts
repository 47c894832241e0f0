import type { Chains } from "../../chains/index.js";
import { AppError } from "../../errors/index.js";
import { formatUsd } from "../../money/index.js";
import type { SafeFetch } from "../../outbound/index.js";
import type { Wallet } from "../../protocol/index.js";
import type {
  Ledger,
  Payer,
  PaymentEvents,
  PaymentPauses,
  SignerRegistry,
  TabAccess,
} from "../ports/index.js";
import { stopFor } from "../ports/index.js";
import {
  type Admission,
  type AdmissionPolicy,
  type ChosenOffer,
  type Committed,
  codeOf,
  type EffectiveLimits,
  type LimitRefusal,
  type LimitsConfig,
  limitExceeded,
  type OfferTerms,
  type PaymentObserver,
  type PaymentOutcome,
  type Reason,
  type Requirement,
} from "../rules/index.js";
import type { PaymentDemandProbe } from "../x402/index.js";
import type { BalanceBook, BalanceReads } from "./balances.js";
import { refusedEarly, tell } from "./events.js";
import type { Reconciler } from "./reconciler.js";
import type { PaymentRun } from "./run.js";

export type { OfferTerms } from "../rules/index.js";

/* What the payment pipeline is configured with, what it is asked, and what it works on between
 * its steps (pipeline.ts, ask-wallet.ts). */

/** Settings of the payment pipeline (server configuration, see docs/payments.md). */
export interface PipelineConfig extends AdmissionPolicy {
  limits: LimitsConfig;
  /** Time bound of one call to a paid service (probe, or paid retry). */
  serviceTimeoutMs: number;
}

export interface PipelineDeps {
  config: PipelineConfig;
  ledger: Ledger;
  signers: SignerRegistry;
  /** The wallets' balances as last read (a courtesy check before signing). */
  balances: BalanceBook;
  fetch: SafeFetch;
  reconciler: Reconciler;
  /** Where a paid service's word that a payment settled is checked (delivery.ts). */
  chains: Pick<Chains, "confirm">;
  now?: () => Date;
  /** Bound of an unclear payment's immediate check on chain (delivery.ts). */
  resolveNowMs?: number;
  /** Told about unexpected failures (with their cause) that the client hears of only as a code. */
  onError?: (error: unknown, context: string) => void;
  /** Told every payment's steps and early refusals (ports/events.ts); never waited on. */
  events?: PaymentEvents;
  /** The operator's kill switch, asked before a server key signs (docs/deploy.md#operating-it). */
  pauses?: PaymentPauses;
  /** The tabs a request may pay from (docs/payments.md#tabs); absent: none. */
  tabs?: TabAccess;
}

/** What a payment needs to know about the request it runs for: its payer, signal, clock and observer. */
export interface PaymentRequest extends Payer {
  /** The client's signal: a client that left starts no payment (one under way still finishes). */
  signal: AbortSignal;
  /** Epoch ms by which the request must end. */
  deadline: number;
  now(): number;
  observer: PaymentObserver;
}

/** How one payment is made, beyond its target (`PaymentPipeline.pay`). */
export interface PayOptions {
  /** The service's name as discovery listed it (display only). */
  serviceName?: string;
  /**
   * The payment's id, when the caller derives it (a quote id's payment): the ledger's primary key
   * then makes it happen at most once. Default: a new random id.
   */
  paymentId?: string;
  /** Pay only an offer on these terms (a quoted one); any other is refused as `price_changed`. */
  terms?: OfferTerms;
}

/** A price check, as the domain sees it; the tool layer turns it into what the model reads. */
export type QuoteResult =
  | { kind: "free"; url: string }
  | {
      kind: "demand";
      url: string;
      offers: Requirement[];
      remaining: Committed & { limits: EffectiveLimits };
      admission?: Admission;
      /** The chosen offer would be approved in the user's wallet, not signed by a server key. */
      needsApproval?: boolean;
    }
  | { kind: "refused"; reason: Reason; message: string; details?: Record<string, unknown> };

/** A payment that passed admission: what signing it (or asking the wallet to) works from. */
export interface Admitted {
  run: PaymentRun;
  request: PaymentRequest;
  wallet: Wallet;
  limits: EffectiveLimits;
  probed: PaymentDemandProbe;
  chosen: ChosenOffer;
  /** Balance reads, started while the service was probed. */
  balances: BalanceReads;
}

/** A limit refused the reservation: the in-memory signature, if any, is dropped unseen. */
export function refuseOverLimit(run: PaymentRun, refusal: LimitRefusal): PaymentOutcome {
  const { message, details } = limitExceeded(`$${formatUsd(refusal.amountAtomic)}`, refusal);
  return run.refuse("limit_exceeded", message, details);
}

/**
 * Why a Solana payment could not be signed as a transaction of its own: the seller's fixed memo
 * makes every payment of its offer the same bytes within a blockhash, and others held each one.
 */
export const BUSY =
  "Other payments of this same offer took every recent transaction it could be (its seller fixes the memo): nothing was paid. Try again shortly.";

/** Why a payment was refused before any quote. */
export interface Refusal {
  reason: Reason;
  message: string;
  details?: Record<string, unknown>;
}

/** A quoted call whose service now names another payee, network or asset: refused as a payment. */
export function refuseOtherTerms(
  run: PaymentRun,
  service: string,
  quotedUsd: string | undefined,
  quoted: OfferTerms | undefined,
): PaymentOutcome {
  const message = `${service} now asks to be paid on other terms than quoted; not paid.`;
  return run.refuse("price_changed", message, { ...(quotedUsd ? { quotedUsd } : {}), quoted });
}

/**
 * A quote while the operator's pause holds for the caller, or its key has ended: refused as the
 * payment would be, so nobody (the model, the user) is told a payment is about to be made that
 * will not be.
 */
export function whileStopped(admission: Admission, stop: ReturnType<typeof stopFor>): Admission {
  if (!stop || !admission.ok) return admission;
  const { ok: _ok, payer: _payer, ...chosen } = admission;
  return { ok: false, ...stop, chosen };
}

/** The kill switch and the request's key as they stand now (its token's rotations too: KeyGrant). */
export function stopNow(
  pauses: PaymentPauses | undefined,
  request: Pick<PaymentRequest, "caller" | "grant">,
  signed = false,
) {
  return stopFor(pauses, request.caller, request.grant?.generation, signed);
}

/**
 * Why a signed payment may not be reserved now, if so: its request lost its idempotency claim
 * (another attempt may be answering it, and must not find it reserved later), or too little time
 * is left to pay safely. Checked at the last moment before the reservation.
 */
export function endedBeforeReserve(
  request: Pick<PaymentRequest, "claim" | "deadline" | "now">,
  minTimeLeftMs: number,
): { reason: "claim_lost" | "too_little_time"; message: string } | undefined {
  if (request.claim?.aborted)
    return {
      reason: "claim_lost",
      message: "This request's Idempotency-Key claim was lost: nothing was paid.",
    };
  if (request.deadline - request.now() < minTimeLeftMs)
    return {
      reason: "too_little_time",
      message: "Too little time is left in this request to complete a payment safely.",
    };
  return undefined;
}

/** The service's call failed only because the request ended (the client left, its deadline). */
export function cutByClient(request: Pick<PaymentRequest, "signal">, reason: string): boolean {
  return request.signal.aborted && reason === "service_unavailable";
}

/** Refused before any quote: nothing to stream but the error (and the `refused_early` event). */
export function refuseEarly(
  events: PaymentEvents | undefined,
  at: Date,
  request: PaymentRequest,
  { reason, message, details = {} }: Refusal,
  service?: string,
): PaymentOutcome {
  const code = codeOf(reason);
  request.observer.error(new AppError(code, message, { details }));
  // A call cut short because the client left is not the service's failure: no refusal is told.
  if (!cutByClient(request, reason))
    tell(events, () => refusedEarly(request, at, { reason, message, service }));
  const status = reason === "service_unavailable" || reason === "unreadable_demand" ? "failed" : "refused";
  return { status, error: { code, reason, message, details } };
}
