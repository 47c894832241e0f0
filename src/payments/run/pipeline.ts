import { randomUUID } from "node:crypto";
import type { Wallet } from "../../protocol/index.js";
import type { PayInput, QuoteInput } from "../../tools/contract.js";
import { DuplicatePaymentError, type Ledger, type SignerAccess, type TabPass } from "../ports/index.js";
import {
  type Admission,
  type Committed,
  committedOf,
  type EffectiveLimits,
  isServiceAllowed,
  type PaymentOutcome,
  refuseWallet,
  resolveLimits,
  sameTerms,
} from "../rules/index.js";
import { buildTarget, probe, type Target } from "../x402/index.js";
import { askWallet } from "./ask-wallet.js";
import { BalanceReads, refuseIfShort } from "./balances.js";
import { type DeliveryDeps, deliver } from "./delivery.js";
import { refusedEarly, type Said, tell } from "./events.js";
import {
  type Admitted,
  BUSY,
  cutByClient,
  endedBeforeReserve,
  type PaymentRequest,
  type PayOptions,
  type PipelineDeps,
  type QuoteResult,
  type Refusal,
  refuseEarly,
  refuseOtherTerms,
  stopNow,
  whileStopped,
} from "./pipeline-types.js";
import { PaymentRun } from "./run.js";
import { findKey, reserveSigned, signBounded } from "./sign.js";
import { admitWith, findTab, fromTab, refuseReserved, tabInUse, tabMeter, tabUnusable } from "./tab-pay.js";

/** What a budget read needs of a request. */
type BudgetScope = Pick<PaymentRequest, "wallet" | "scopeId" | "now" | "caller" | "grant">;

export type {
  OfferTerms,
  PaymentRequest,
  PayOptions,
  PipelineConfig,
  PipelineDeps,
  QuoteResult,
} from "./pipeline-types.js";

/**
 * The payment pipeline, in code, for every payment (docs/payments.md): probe -> admit -> reserve ->
 * sign -> submit -> settle -> record; a {@link PaymentRun} owns each payment from its quote on. The
 * model can ask for a payment; only this code decides whether one happens.
 */
export class PaymentPipeline {
  readonly now: () => Date; // the clock every payment step reads

  private readonly delivery: DeliveryDeps;

  constructor(private readonly deps: PipelineDeps) {
    this.now = deps.now ?? (() => new Date());
    this.delivery = {
      fetch: deps.fetch,
      ledger: deps.ledger,
      reconciler: deps.reconciler,
      chains: deps.chains,
      serviceTimeoutMs: deps.config.serviceTimeoutMs,
      ...(deps.resolveNowMs !== undefined ? { resolveNowMs: deps.resolveNowMs } : {}),
    };
  }

  /** The limits in force: the server's, the request's and the caller's key's (resolveLimits). */
  limitsFor(request: Pick<PaymentRequest, "spendingLimits" | "grant">): EffectiveLimits {
    return resolveLimits(this.deps.config.limits, request.spendingLimits, request.grant);
  }

  /** What the wallet (and a capped key, over all its wallets) committed today and this request. */
  async committed(request: BudgetScope): Promise<Committed> {
    if (!request.wallet) return { today: 0n, thisRequest: 0n };
    return committedOf(await this.budgetOf(request, request.wallet));
  }

  /** The ledger's budget read for this request's wallet, with the caller's day when capped. */
  private budgetOf(request: BudgetScope, wallet: Wallet) {
    const caller = request.grant?.daily !== undefined ? request.caller : undefined;
    return this.deps.ledger.budget(wallet.address, request.scopeId, new Date(request.now()), caller);
  }

  /** Ask a service its price without paying, through the same admission as a payment. */
  async quote(request: PaymentRequest, input: QuoteInput): Promise<QuoteResult> {
    const limits = this.limitsFor(request);
    const target = buildTarget(input);
    const refused = request.wallet && refuseWallet(request.wallet, limits);
    if (refused) return this.told(request, { kind: "refused" as const, ...refused }, target.url);
    const probed = await this.probe(request, target, limits);
    if (probed.kind === "refused") return this.told(request, probed, target.url);
    if (probed.kind === "free") return { kind: "free", url: probed.response.url };
    const committed = await this.committed(request);
    const remaining = { ...committed, limits };
    const { demand, payee } = probed;
    const wallet = request.wallet;
    if (!wallet) return { kind: "demand", url: payee.url, offers: demand.offers, remaining };
    const serverKey = await this.deps.signers.canSign(wallet, request);
    const tab = await tabInUse(request, serverKey, () => findTab(this.deps.tabs, request));
    if (tab?.ok === false) return this.told(request, tabUnusable(tab), payee.url); // as `pay` refuses it
    const now = request.now();
    const asked = { wallet, limits, timeLeftMs: request.deadline - now, committed, shownUsd: undefined, now };
    const pass = tab?.ok ? tab.pass : undefined;
    const { admission: admitted } = admitWith(demand.offers, asked, this.deps.config, serverKey, pass);
    const admission = whileStopped(admitted, stopNow(this.deps.pauses, request));
    if (!admission.ok) this.told(request, admission, payee.url);
    // The payment would be signed by whoever admission names: the same answer `pay` acts on.
    const needsApproval = admission.ok ? { needsApproval: admission.payer.by === "wallet" } : {};
    return { kind: "demand", url: payee.url, offers: demand.offers, remaining, admission, ...needsApproval };
  }

  /** A refused quote is told as a refusal before any payment (the audit trail lists refusals). */
  private told<R extends Said>(request: PaymentRequest, refusal: R, service: string): R {
    const cut = cutByClient(request, refusal.reason);
    if (!cut) tell(this.deps.events, () => refusedEarly(request, this.now(), { ...refusal, service }));
    return refusal;
  }

  /** The ledger payments are recorded in (a payment read back by its id). */
  get ledger(): Ledger {
    return this.deps.ledger;
  }

  /** Pay for one call and fetch its answer, or say why not. Every refusal and failure is reported. */
  async pay(request: PaymentRequest, input: PayInput, options: PayOptions = {}): Promise<PaymentOutcome> {
    const wallet = request.wallet;
    const noWallet = "No wallet was given with this request, so nothing can be paid.";
    if (!wallet) return this.refuseEarly(request, { reason: "no_wallet", message: noWallet });
    const limits = this.limitsFor(request);
    const target = buildTarget(input);
    const refused = refuseWallet(wallet, limits);
    if (refused) return this.refuseEarly(request, refused, target.url);
    // The probe leaves first; the wallet's balance and the server's key are read while it answers.
    const probing = this.probe(request, target, limits);
    const balances = new BalanceReads(this.deps.balances, wallet, this.deps.config.assets, limits);
    const finding = findKey(this.deps.signers, request, wallet);
    const tabbing = findTab(this.deps.tabs, request);
    const probed = await probing;
    if (probed.kind === "refused") return this.refuseEarly(request, probed, target.url);
    if (probed.kind === "free") return { status: "free", response: probed.response };

    const key = await finding;
    // A tab the request names pays (tab-pay.ts) or refuses; else a server key, else a serving tab.
    const tab = await tabInUse(request, key.signer !== undefined, () => tabbing);
    if (tab && !tab.ok) return this.refuseEarly(request, tabUnusable(tab), target.url);
    const now = request.now();
    const { admission, viaTab } = admitWith(
      probed.demand.offers,
      { wallet, limits, timeLeftMs: request.deadline - now, shownUsd: input.maxUsd, now },
      this.deps.config,
      key.signer !== undefined,
      tab?.ok ? tab.pass : undefined,
    );
    const chosen = admission.ok ? admission : admission.chosen;
    if (!chosen) return this.refuseEarly(request, admission as Extract<Admission, { ok: false }>, target.url);
    // Paid only on the terms quoted (payee, network, asset): refused as a payment, with its id.
    const termsChanged = options.terms !== undefined && !sameTerms(chosen.offer, options.terms);
    const { serviceName } = options;
    const run = new PaymentRun(
      this.deps.ledger,
      request.observer,
      {
        paymentId: options.paymentId ?? `pay_${randomUUID()}`,
        scopeId: request.scopeId,
        caller: request.caller ?? null,
        wallet: wallet.address,
        service: probed.payee.url,
        ...(serviceName ? { serviceName } : {}),
        network: chosen.offer.network,
        asset: chosen.offer.asset,
        payTo: chosen.offer.payTo,
        amount: chosen.amount,
        ...(tab?.ok ? { openTab: tabMeter(tab.pass) } : {}),
      },
      this.now,
      { onError: this.deps.onError, events: this.deps.events, limits },
    );
    const admitted: Admitted = { run, request, wallet, limits, probed, chosen, balances };
    try {
      if (!admission.ok || termsChanged) {
        await this.announce(admitted);
        return admission.ok
          ? refuseOtherTerms(run, probed.payee.url, input.maxUsd, options.terms)
          : run.refuse(admission.reason, admission.message, admission.details);
      }
      if ("error" in key) throw key.error;
      // Admission named who signs: a server key (only when one was found), or the user's wallet.
      if (viaTab) return await this.execute(admitted, viaTab.signer, viaTab);
      if (admission.payer.by === "server" && key.signer) return await this.execute(admitted, key.signer);
      // Paused, the user is not asked to sign what would be refused once signed.
      return (await this.refuseIfPaused(admitted)) ?? (await this.askApproval(admitted));
    } catch (error) {
      if (error instanceof DuplicatePaymentError) return run.heldElsewhere(); // a quote id paid elsewhere
      this.deps.onError?.(error, "payment");
      return run.crashed(error);
    }
  }

  /** The `quoted` update with the budget read now, for a payment stopping or waiting before a reservation. */
  private async announce(admitted: Admitted): Promise<Committed | undefined> {
    const { run, request, wallet, limits } = admitted;
    const snapshot = await this.budgetOf(request, wallet).catch(() => undefined);
    if (snapshot) run.measure({ limits, snapshot });
    run.quoted();
    return snapshot ? committedOf(snapshot) : undefined;
  }

  private async execute(admitted: Admitted, signer: SignerAccess, tab?: TabPass): Promise<PaymentOutcome> {
    const { run, request, limits, probed, chosen } = admitted;
    const { offer, amount } = chosen;
    // From a tab, the session key's balance pays; what the tab holds is said before it (tab-pay.ts).
    const balances = tab
      ? fromTab(admitted, tab, this.deps.balances, this.deps.config.assets)
      : admitted.balances;
    if (tab && amount > tab.left) {
      await this.announce(admitted);
      return refuseReserved(run, { ok: false, tab: "short", tabLeftAtomic: tab.left }, tab);
    }
    const paused = await this.refuseIfPaused(admitted);
    if (paused) return paused;
    // Signed in memory beside the balance read; sent only after the reservation with its intent.
    const sign = () =>
      signBounded(probed, chosen, signer, this.deps.config.serviceTimeoutMs, this.deps.onError);
    const [signed, balance] = await Promise.all([sign(), balances.of(offer, amount)]);
    const ended = endedBeforeReserve(request, this.deps.config.minTimeLeftMs); // the reads took time
    if (balance === undefined || balance < amount || !signed || ended) {
      await this.announce(admitted);
      const poor = refuseIfShort(run, balance, amount, offer.network);
      if (poor) return poor;
      if (!signed || !ended) return run.fail("signing_failed", "The payment could not be signed.");
      return run.refuse(ended.reason, ended.message);
    }
    const stopped = await this.refuseIfPaused(admitted); // paused while signing (a fetched blockhash)
    if (stopped) return stopped;
    const signedUntil = () => new Date(request.now() + chosen.timeoutSeconds * 1000); // as each signature
    const sent = await reserveSigned(signed, sign, (authorization) =>
      run.reserveAndRecordIntent({
        requirement: offer,
        limits,
        authorization,
        // Signed to end within the tab (nothing from it moves money after), in its spelling of the asset.
        ...(tab ? { tab: { tabId: tab.tabId, until: signedUntil() }, asset: tab.asset } : {}),
      }),
    );
    if ("unsigned" in sent) return this.announce(admitted).then(() => run.fail("signing_failed", BUSY));
    if (sent.answer) return refuseReserved(run, sent.answer, tab);
    const late = stopNow(this.deps.pauses, request, true); // paused or revoked while it reserved:
    if (late) return run.fail(late.reason, late.message); // its signature never leaves the process
    balances.sent(offer, amount);
    const outcome = await deliver(this.delivery, run, probed.payee, sent.signed.headers);
    if (outcome.status !== "paid" || outcome.error) balances.unsure(offer);
    return outcome;
  }

  /** The kill switch and the caller's key (docs/deploy.md): before signing or asking, again before reserving (and after). */
  private async refuseIfPaused(admitted: Admitted): Promise<PaymentOutcome | undefined> {
    const stop = stopNow(this.deps.pauses, admitted.request);
    if (!stop) return undefined;
    await this.announce(admitted);
    return admitted.run.refuse(stop.reason, stop.message, stop.details);
  }

  /** Stop before signing and ask the user's wallet (ask-wallet.ts). */
  private askApproval(admitted: Admitted): Promise<PaymentOutcome> {
    return askWallet(
      {
        signers: this.deps.signers,
        announce: (a) => this.announce(a),
        committed: (r) => this.committed(r),
        sign: (p, c, s) => signBounded(p, c, s, this.deps.config.serviceTimeoutMs, this.deps.onError),
      },
      admitted,
    );
  }

  private async probe(request: PaymentRequest, target: Target, limits: EffectiveLimits) {
    return probe(this.deps.fetch, target, {
      signal: request.signal,
      timeoutMs: this.deps.config.serviceTimeoutMs,
      allowOrigin: (origin) => isServiceAllowed(origin, limits),
    });
  }

  /** Refused before any quote (pipeline-types.ts, `refuseEarly`); `pay_quote` refuses a quote id so. */
  refuseEarly(request: PaymentRequest, refusal: Refusal, service?: string): PaymentOutcome {
    return refuseEarly(this.deps.events, this.now(), request, refusal, service);
  }
}
