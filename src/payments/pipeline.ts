import { randomUUID } from "node:crypto";
import { ChainUnreadable, WalletCannotPay } from "../chains/index.js";
import { AppError } from "../errors/index.js";
import { formatUsd } from "../money/index.js";
import type { SafeFetch } from "../outbound/index.js";
import type { SpendingLimitsInput, Wallet } from "../protocol/index.js";
import type { PayInput, QuoteInput } from "../tools/contract.js";
import { type Admission, type AdmissionPolicy, admit, type ChosenOffer } from "./admission.js";
import { type BalanceBook, BalanceReads, refuseIfShort } from "./balances.js";
import { spentOf } from "./budget.js";
import { type DeliveryDeps, deliver } from "./delivery.js";
import type { Ledger } from "./ledger.js";
import { codeOf, type PaymentObserver, type PaymentOutcome, type Reason } from "./outcome.js";
import {
  checkSpend,
  type EffectiveLimits,
  isServiceAllowed,
  type LimitRefusal,
  type LimitsConfig,
  type Requirement,
  resolveLimits,
  type SpentSoFar,
} from "./policy.js";
import { buildTarget, type PaymentDemandProbe, probe, type Target } from "./probe.js";
import type { Reconciler } from "./reconciler.js";
import { PaymentRun } from "./run.js";
import type { SignerAccess, SignerRegistry } from "./signers.js";
import type { StoredApproval } from "./stored-approval.js";
import { type SignedPayment, signOffer } from "./x402.js";

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
  now?: () => Date;
  /** Bound of an unclear payment's immediate check on chain (delivery.ts). */
  resolveNowMs?: number;
  /** Told about unexpected failures (with their cause) that the client hears of only as a code. */
  onError?: (error: unknown, context: string) => void;
}

/** What a payment needs to know about the chat request it runs for. */
export interface PaymentRequest {
  requestId: string;
  wallet?: Wallet;
  /** Decides whether a server-held key may sign; never logged or streamed. */
  bearerToken?: string;
  /** The caller's identity (bearer token name), which an approval must come from; absent without auth. */
  caller?: string;
  spendingLimits?: SpendingLimitsInput;
  /** The client's signal: a client that left starts no payment (one under way still finishes). */
  signal: AbortSignal;
  /** Epoch ms by which the request must end. */
  deadline: number;
  now(): number;
  observer: PaymentObserver;
}

/** A price check, as the domain sees it; the tool layer turns it into what the model reads. */
export type QuoteResult =
  | { kind: "free"; url: string }
  | {
      kind: "demand";
      url: string;
      offers: Requirement[];
      remaining: SpentSoFar & { limits: EffectiveLimits };
      admission?: Admission;
      /** The chosen offer would be approved in the user's wallet, not signed by a server key. */
      needsApproval?: boolean;
    }
  | { kind: "refused"; reason: Reason; message: string; details?: Record<string, unknown> };

/** A payment that passed admission: what signing it (or asking the wallet to) works from. */
interface Admitted {
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
function refuseOverLimit(run: PaymentRun, refusal: LimitRefusal): PaymentOutcome {
  const amount = refusal.amountAtomic;
  return run.refuse(
    "limit_exceeded",
    `Paying $${formatUsd(amount)} would exceed the ${refusal.limit} limit of $${formatUsd(refusal.limitAtomic)} ($${formatUsd(refusal.remainingAtomic)} left).`,
    {
      limit: refusal.limit,
      limitUsd: formatUsd(refusal.limitAtomic),
      remainingUsd: formatUsd(refusal.remainingAtomic),
    },
  );
}

/**
 * The payment pipeline, in code, for every payment (docs/payments.md): probe -> admit -> reserve
 * -> sign -> submit -> settle -> record. A {@link PaymentRun} owns each payment from its quote on.
 * The model can ask for a payment; only this code decides whether one happens.
 */
export class PaymentPipeline {
  private readonly now: () => Date;

  private readonly delivery: DeliveryDeps;

  constructor(private readonly deps: PipelineDeps) {
    this.now = deps.now ?? (() => new Date());
    this.delivery = {
      fetch: deps.fetch,
      ledger: deps.ledger,
      reconciler: deps.reconciler,
      serviceTimeoutMs: deps.config.serviceTimeoutMs,
      ...(deps.resolveNowMs !== undefined ? { resolveNowMs: deps.resolveNowMs } : {}),
    };
  }

  limitsFor(request: Pick<PaymentRequest, "spendingLimits">): EffectiveLimits {
    return resolveLimits(this.deps.config.limits, request.spendingLimits);
  }

  /** What the wallet spent today and this request spent so far (everything that counts as spent). */
  async spent(request: Pick<PaymentRequest, "wallet" | "requestId" | "now">): Promise<SpentSoFar> {
    if (!request.wallet) return { today: 0n, thisRequest: 0n };
    return spentOf(
      await this.deps.ledger.budget(request.wallet.address, request.requestId, new Date(request.now())),
    );
  }

  /** Ask a service its price without paying, through the same admission as a payment. */
  async quote(request: PaymentRequest, input: QuoteInput): Promise<QuoteResult> {
    const limits = this.limitsFor(request);
    const probed = await this.probe(request, buildTarget(input), limits);
    if (probed.kind === "refused") return probed;
    if (probed.kind === "free") return { kind: "free", url: probed.response.url };
    const spent = await this.spent(request);
    const remaining = { ...spent, limits };
    const { demand, payee } = probed;
    const wallet = request.wallet;
    if (!wallet) return { kind: "demand", url: payee.url, offers: demand.offers, remaining };
    const admission = admit(
      demand.offers,
      { wallet, limits, timeLeftMs: request.deadline - request.now(), spent },
      this.deps.config,
    );
    const needsApproval = admission.ok
      ? await this.needsApproval(request, wallet, limits, admission.amount)
      : undefined;
    return {
      kind: "demand",
      url: payee.url,
      offers: demand.offers,
      remaining,
      admission,
      ...(needsApproval !== undefined ? { needsApproval } : {}),
    };
  }

  /** Whether the user's wallet must approve this amount: no usable server key, or above the threshold. */
  private async needsApproval(
    request: Pick<PaymentRequest, "bearerToken">,
    wallet: Wallet,
    limits: EffectiveLimits,
    amount: bigint,
  ): Promise<boolean> {
    if (limits.approvalAbove !== undefined && amount > limits.approvalAbove) return true;
    return !(await this.deps.signers.canSign(wallet, request.bearerToken));
  }

  /** Pay for one call and fetch its answer, or say why not. Every refusal and failure is reported. */
  /** `serviceName`: the service's name as discovery listed it (display only). */
  async pay(request: PaymentRequest, input: PayInput, serviceName?: string): Promise<PaymentOutcome> {
    const wallet = request.wallet;
    if (!wallet)
      return this.refuseEarly(
        request,
        "no_wallet",
        "No wallet was given with this request, so nothing can be paid.",
      );
    const limits = this.limitsFor(request);
    // The probe leaves first; the wallet's balance is read while the service answers.
    const probing = this.probe(request, buildTarget(input), limits);
    const balances = new BalanceReads(this.deps.balances, wallet, this.deps.config.assets, limits);
    const probed = await probing;
    if (probed.kind === "refused")
      return this.refuseEarly(request, probed.reason, probed.message, probed.details);
    if (probed.kind === "free") return { status: "free", response: probed.response };

    const admission = admit(
      probed.demand.offers,
      {
        wallet,
        limits,
        timeLeftMs: request.deadline - request.now(),
        ...(input.maxUsd !== undefined ? { shownUsd: input.maxUsd } : {}),
      },
      this.deps.config,
    );
    const chosen = admission.ok ? admission : admission.chosen;
    if (!chosen) {
      const refused = admission as Extract<Admission, { ok: false }>;
      return this.refuseEarly(request, refused.reason, refused.message, refused.details);
    }
    const run = new PaymentRun(
      this.deps.ledger,
      request.observer,
      {
        paymentId: `pay_${randomUUID()}`,
        requestId: request.requestId,
        caller: request.caller ?? null,
        wallet: wallet.address,
        service: probed.payee.url,
        ...(serviceName ? { serviceName } : {}),
        network: chosen.offer.network,
        asset: chosen.offer.asset,
        payTo: chosen.offer.payTo,
        amount: chosen.amount,
      },
      this.now,
      this.deps.onError,
    );
    // From here on the payment runs to its outcome even if the client leaves (its record must not
    // be lost). Its `quoted` update, with the budget meter, goes out before anything is sent.
    const admitted: Admitted = { run, request, wallet, limits, probed, chosen, balances };
    try {
      if (!admission.ok) {
        await this.announce(admitted);
        return run.refuse(admission.reason, admission.message, admission.details);
      }
      const signer = await this.deps.signers.find(wallet, request.bearerToken);
      // No usable server key, or more than a delegated key may sign alone: the user's wallet signs.
      const above = limits.approvalAbove !== undefined && chosen.amount > limits.approvalAbove;
      if (!signer.ok || above) return await this.askApproval(admitted);
      return await this.execute(admitted, signer.signer);
    } catch (error) {
      this.deps.onError?.(error, "payment");
      return run.crashed(error);
    }
  }

  /**
   * The `quoted` update with the budget meter read now, for a payment that stops or waits before
   * a reservation (which would read the budget itself); the spending read, for the checks.
   */
  private async announce(admitted: Admitted): Promise<SpentSoFar | undefined> {
    const { run, request, wallet, limits } = admitted;
    const snapshot = await this.deps.ledger
      .budget(wallet.address, request.requestId, new Date(request.now()))
      .catch(() => undefined);
    if (snapshot) run.measure({ limits, snapshot });
    run.quoted();
    return snapshot ? spentOf(snapshot) : undefined;
  }

  private async execute(admitted: Admitted, signer: SignerAccess): Promise<PaymentOutcome> {
    const { run, request, limits, probed, chosen, balances } = admitted;
    const { offer, amount } = chosen;
    // Sign in memory while the balance is read. The signature leaves the process only after the
    // reservation and the intent are one durable write; a refused one is dropped unseen.
    const [signed, balance] = await Promise.all([
      this.sign(probed, chosen, signer),
      balances.of(offer, amount),
    ]);
    // The deadline again: the reads above took time.
    const late = request.deadline - request.now() < this.deps.config.minTimeLeftMs;
    if (balance === undefined || balance < amount || !signed || late) {
      await this.announce(admitted);
      const poor = refuseIfShort(run, balance, amount, offer.network);
      if (poor) return poor;
      if (!signed) return run.fail("signing_failed", "The payment could not be signed.");
      return run.refuse(
        "too_little_time",
        "Too little time is left in this request to complete a payment safely.",
      );
    }
    const refusal = await run.reserveAndRecordIntent({
      requirement: offer,
      limits,
      authorization: signed.authorization,
    });
    if (refusal) return refuseOverLimit(run, refusal);
    balances.sent(offer, amount);
    const outcome = await deliver(this.delivery, run, probed.payee, signed.headers);
    if (outcome.status !== "paid" || outcome.error) balances.unsure(offer);
    return outcome;
  }

  /**
   * Stop before signing and ask the user's wallet (docs/payments.md, "Approval"). Everything a
   * payment must pass runs first (offer, allow-lists, the amount limits as they stand, the balance),
   * so the user is never asked to sign what policy would refuse. The SDK builds the payment as for
   * a held key, with a stand-in signer; the row is stored with what the wallet signs, and holds no
   * budget until the approval reserves it.
   */
  private async askApproval(admitted: Admitted): Promise<PaymentOutcome> {
    const { run, request, wallet, limits, probed, chosen, balances } = admitted;
    const { offer, amount } = chosen;
    const draft = this.deps.signers.draftFor(wallet, offer.network);
    const [read, balance, signed, cannotPay] = await Promise.all([
      this.announce(admitted),
      balances.of(offer, amount),
      this.sign(probed, chosen, { schemeFor: () => draft.schemes }),
      // A smart-contract wallet is never asked to sign for a token that could not check it.
      draft.assertCanPay?.(offer.asset).then(
        () => undefined,
        (error: unknown) => error,
      ),
    ]);
    const spent = read ?? (await this.spent(request));
    const check = checkSpend(amount, limits, spent);
    if (!check.ok) return refuseOverLimit(run, check);
    const poor = refuseIfShort(run, balance, amount, offer.network);
    if (poor) return poor;
    if (cannotPay instanceof WalletCannotPay) {
      return run.refuse("wallet_unsupported", cannotPay.message, { reason: cannotPay.reason });
    }
    if (cannotPay instanceof ChainUnreadable) {
      return run.fail(
        "chain_unreadable",
        `Could not read the wallet on ${offer.network}; nothing was asked or paid.`,
      );
    }
    if (cannotPay) throw cannotPay;
    if (!signed) return run.fail("signing_failed", "The payment could not be prepared for your wallet.");
    const nowS = Math.floor(request.now() / 1000);
    const expiresS = draft.expiresAt(signed.payload, nowS);
    if (!(expiresS > nowS)) {
      return run.fail("signing_failed", "The service's payment window is too short to approve in a wallet.");
    }
    const sign = draft.request(signed.payload);
    const stored: StoredApproval = {
      ...(run.facts.serviceName ? { serviceName: run.facts.serviceName } : {}),
      payload: signed.payload,
      sign,
      target: probed.payee,
      window: chosen.timeoutSeconds,
    };
    return run.awaitApproval({
      requirement: offer,
      caller: request.caller ?? null,
      stored,
      sign,
      expiresAt: new Date(expiresS * 1000),
    });
  }

  private async probe(request: PaymentRequest, target: Target, limits: EffectiveLimits) {
    return probe(this.deps.fetch, target, {
      signal: request.signal,
      timeoutMs: this.deps.config.serviceTimeoutMs,
      allowOrigin: (origin) => isServiceAllowed(origin, limits),
    });
  }

  /**
   * Sign in memory, bounded in time (a Solana signature needs a recent blockhash from the node,
   * which may hang); undefined when it fails, with the cause in the log.
   */
  private async sign(
    probed: PaymentDemandProbe,
    chosen: ChosenOffer,
    signer: SignerAccess,
  ): Promise<SignedPayment | undefined> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error("signing timed out")), this.deps.config.serviceTimeoutMs);
    });
    try {
      const signing = signOffer(probed.demand, chosen.index, signer.schemeFor(chosen.offer.network), {
        amount: chosen.amount,
        payTo: chosen.offer.payTo,
        maxTimeoutSeconds: chosen.timeoutSeconds,
        nowS: Math.floor(this.now().getTime() / 1000),
      });
      return await Promise.race([signing, timeout]);
    } catch (error) {
      this.deps.onError?.(error, "signing");
      return undefined;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Refused before any quote: nothing to stream but the error. */
  private refuseEarly(
    request: PaymentRequest,
    reason: Reason,
    message: string,
    details: Record<string, unknown> = {},
  ): PaymentOutcome {
    const code = codeOf(reason);
    request.observer.error(new AppError(code, message, { details }));
    const status = reason === "service_unavailable" || reason === "unreadable_demand" ? "failed" : "refused";
    return { status, error: { code, reason, message, details } };
  }
}
