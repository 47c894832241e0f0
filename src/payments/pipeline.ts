import { randomUUID } from "node:crypto";
import type { TurnContext } from "../agent/index.js";
import { AppError, type ErrorCode } from "../errors/index.js";
import { formatUsd, parseUsd } from "../money/index.js";
import { type SafeFetch, SafeFetchBlockedError, type SafeResponse } from "../net/index.js";
import type { PaymentUpdate } from "../protocol/index.js";
import type { PayInput, PayOutput } from "../tools/contract.js";
import type { ChainReader } from "./chain.js";
import type { Ledger, PaymentRecord } from "./ledger.js";
import {
  chooseOffer,
  type EffectiveLimits,
  isServiceAllowed,
  type LimitsConfig,
  resolveLimits,
} from "./policy.js";
import type { Reconciler } from "./reconciler.js";
import type { SignerAccess, SignerRegistry } from "./signers.js";
import type { LedgerStatus } from "./state.js";
import { type PaymentDemand, readPaymentDemand, readSettlement, signOffer } from "./x402.js";

/** Settings of the payment pipeline (server configuration, see docs/payments.md). */
export interface PipelineConfig {
  limits: LimitsConfig;
  /** network -> allowed asset addresses / mints (USDC-like, 6 decimals). */
  assets: Record<string, string[]>;
  preferredNetworks: string[];
  /** Longest authorization window we sign. */
  maxTimeoutSeconds: number;
  /** No payment starts when less than this is left before the request's deadline. */
  minTimeLeftMs: number;
  /** Time bound of one call to a paid service (probe, or paid retry). */
  serviceTimeoutMs: number;
}

export interface PipelineDeps {
  config: PipelineConfig;
  ledger: Ledger;
  signers: SignerRegistry;
  chain: ChainReader;
  fetch: SafeFetch;
  reconciler: Reconciler;
  now?: () => Date;
  /** Told about unexpected failures (with their cause) that the client hears of only as a code. */
  onError?: (error: unknown, context: string) => void;
}

/** An HTTP call to a service, as the tools describe it. */
export interface Target {
  url: string;
  method: "GET" | "POST";
  body?: string;
}

export function buildTarget(input: Pick<PayInput, "url" | "method" | "query" | "body">): Target {
  const url = new URL(input.url);
  for (const [k, v] of Object.entries(input.query ?? {})) url.searchParams.set(k, v);
  // A canonical form, so the same call written differently is recognised as the same call.
  url.searchParams.sort();
  const method = input.method ?? (input.body ? "POST" : "GET");
  const body = input.body
    ? JSON.stringify(Object.fromEntries(Object.entries(input.body).sort(([a], [b]) => (a < b ? -1 : 1))))
    : undefined;
  return { url: url.toString(), method, ...(body ? { body } : {}) };
}

export type ProbeResult =
  | { kind: "free"; response: SafeResponse }
  /** `payee`: the call as it reached the service that issued the demand (after any redirects). */
  | { kind: "demand"; demand: PaymentDemand; payee: Target }
  | { kind: "error"; error: AppError };

/** Which origins a tool's outbound calls may reach: the spending limits' `allowedServices`, at every hop. */
export function serviceAdmission(
  limits: Pick<EffectiveLimits, "allowedServices">,
): (origin: string) => boolean {
  return (origin) => isServiceAllowed(origin, limits);
}

const MAX_DATA_CHARS = 8000;
/** How long an unclear payment's immediate check on chain may hold the stream. */
const RESOLVE_NOW_MS = 5000;

/** Turn a service's body into data for the model: parsed JSON when it is JSON, bounded, marked untrusted. */
export function untrustedData(response: SafeResponse): NonNullable<PayOutput["data"]> {
  const contentType = response.headers.get("content-type") ?? "application/octet-stream";
  const text = new TextDecoder().decode(response.body);
  let body: unknown = text.slice(0, MAX_DATA_CHARS);
  if (/json/i.test(contentType) && !response.truncated) {
    try {
      body = JSON.parse(text);
    } catch {
      // keep the bounded text
    }
  }
  return {
    untrusted: true,
    contentType,
    body,
    truncated: response.truncated || text.length > MAX_DATA_CHARS,
  };
}

function parseBody(response: SafeResponse): unknown {
  try {
    return JSON.parse(new TextDecoder().decode(response.body));
  } catch {
    return undefined;
  }
}

/**
 * The payment pipeline, in code, for every payment (docs/payments.md):
 * probe -> choose an offer -> stream the estimate -> policy -> balance -> atomic reserve -> sign ->
 * record intent -> submit -> settle -> record, each step streamed as a `p:` update. The model can
 * ask for a payment; only this code decides whether one happens.
 */
export class PaymentPipeline {
  private readonly now: () => Date;

  constructor(private readonly deps: PipelineDeps) {
    this.now = deps.now ?? (() => new Date());
  }

  limitsFor(ctx: TurnContext): EffectiveLimits {
    return resolveLimits(this.deps.config.limits, ctx.spendingLimits);
  }

  /**
   * Ask the service what it costs (an unpaid request). Never pays. Every origin the call reaches,
   * the first and each redirect hop, must pass `allowOrigin` before anything is sent there; the
   * origin that answers 402 is the service that would be paid.
   */
  async probe(
    target: Target,
    signal: AbortSignal,
    allowOrigin: (origin: string) => boolean,
  ): Promise<ProbeResult> {
    let response: SafeResponse;
    try {
      response = await this.deps.fetch(target.url, {
        method: target.method,
        headers: target.body ? { "content-type": "application/json" } : {},
        ...(target.body ? { body: target.body } : {}),
        signal: AbortSignal.any([signal, AbortSignal.timeout(this.deps.config.serviceTimeoutMs)]),
        allowOrigin,
      });
    } catch (error) {
      return { kind: "error", error: fetchError(error, target.url) };
    }
    if (response.status === 402) {
      const demand = readPaymentDemand((n) => response.headers.get(n), parseBody(response));
      if (!demand) {
        return {
          kind: "error",
          error: new AppError(
            "payment_failed",
            "The service asked for payment in a form this agent cannot read.",
          ),
        };
      }
      // A redirect that turned a POST into a GET dropped the body; the paid call repeats what arrived.
      const sameMethod = response.method === target.method;
      const payee: Target = {
        url: response.url,
        method: sameMethod ? target.method : "GET",
        ...(sameMethod && target.body ? { body: target.body } : {}),
      };
      return { kind: "demand", demand, payee };
    }
    if (response.status >= 200 && response.status < 300) return { kind: "free", response };
    return {
      kind: "error",
      error: new AppError("service_unavailable", `The service answered HTTP ${response.status}.`, {
        details: { service: target.url, httpStatus: response.status },
      }),
    };
  }

  /** Run the whole pipeline for one paid call. Refusals and failures are reported on the turn and returned. */
  async payAndFetch(ctx: TurnContext, input: PayInput): Promise<PayOutput> {
    const requested = buildTarget(input);
    const limits = this.limitsFor(ctx);
    const allowOrigin = serviceAdmission(limits);
    const fail = (code: ErrorCode, message: string, details: Record<string, unknown> = {}): PayOutput => {
      const error = new AppError(code, message, { details });
      ctx.reportError(error);
      return { status: "refused", error: { code, message, ...details } };
    };

    if (!ctx.wallet) {
      return fail("payment_unavailable", "No wallet was given with this request, so nothing can be paid.");
    }
    const wallet = ctx.wallet;
    if (ctx.signal.aborted)
      return { status: "refused", error: { code: "aborted", message: "The request ended." } };

    const probe = await this.probe(requested, ctx.signal, allowOrigin);
    if (probe.kind === "error") {
      ctx.reportError(probe.error);
      return {
        status: probe.error.code === "limit_exceeded" ? "refused" : "failed",
        error: { code: probe.error.code, message: probe.error.message, ...probe.error.details },
      };
    }
    if (probe.kind === "free") return { status: "free", data: untrustedData(probe.response) };

    // The service being paid is the one that issued the demand; the probe admitted its origin.
    const { demand, payee: target } = probe;
    const service = { url: target.url };
    const choice = chooseOffer(demand.offers, {
      walletChain: wallet.chain,
      allowedNetworks: limits.allowedNetworks,
      allowedAssets: this.deps.config.assets,
      preferredNetworks: this.deps.config.preferredNetworks,
      maxTimeoutSeconds: this.deps.config.maxTimeoutSeconds,
    });
    if (!choice.ok) {
      const networkRule = choice.rejections.some((r) => r.code === "network_not_allowed");
      return fail(networkRule ? "limit_exceeded" : "payment_unavailable", choice.reason, {
        ...(networkRule ? { limit: "allowedNetworks" } : {}),
        offers: choice.rejections.map((r) => ({ network: r.network, reason: r.code })),
      });
    }
    const offer = choice.offer;
    const index = demand.offers.indexOf(offer);
    const amount = choice.amount;
    const paymentId = `pay_${randomUUID()}`;
    const base = {
      paymentId,
      service,
      amount: { atomic: amount.toString(), usd: formatUsd(amount), asset: offer.asset },
      network: offer.network,
      payTo: offer.payTo,
    };
    const update = (status: PaymentUpdate["status"], extra: Partial<PaymentUpdate> = {}) =>
      ctx.emitPayment({ ...base, status, ...extra });
    const refuse = (code: ErrorCode, message: string, details: Record<string, unknown> = {}): PayOutput => {
      update("refused", { reason: code, message });
      ctx.recordPayment({
        paymentId,
        status: "refused",
        service: target.url,
        amountUsd: base.amount.usd,
        network: offer.network,
      });
      return fail(code, message, { paymentId, priceUsd: base.amount.usd, ...details });
    };

    // The cost estimate goes out before anything is signed.
    update("quoted", { message: `${service.url} costs $${base.amount.usd} on ${offer.network}` });

    // From the quote on, every way out of this payment ends with a final `p:` update. A step that
    // throws (the store went away, say) before anything was signed ends it as failed, with a stable
    // code; the exception's own text (SQL, parameters, stack) goes to the log only.
    const run = async (): Promise<PayOutput> => {
      if (input.maxUsd !== undefined) {
        const shown = parseUsd(input.maxUsd);
        if (!shown.ok)
          return refuse("payment_unavailable", `maxUsd "${input.maxUsd.slice(0, 20)}" is not a USD amount.`);
        if (amount > shown.atomic) {
          return refuse(
            "price_changed",
            `The service now asks $${base.amount.usd}, more than the $${formatUsd(shown.atomic)} quoted; not paid.`,
            {
              quotedUsd: formatUsd(shown.atomic),
            },
          );
        }
      }
      // From the streamed quote on, this payment runs to its outcome even if the client leaves (its
      // record must not be lost); a client that left earlier started nothing (checked before the probe).
      if (ctx.deadline - ctx.now() < this.deps.config.minTimeLeftMs) {
        return refuse(
          "deadline_exceeded",
          "Too little time is left in this request to complete a payment safely.",
        );
      }
      const signer = await this.deps.signers.find(wallet, ctx.bearerToken);
      if (!signer.ok) return refuse("payment_unavailable", `Cannot sign: ${signer.reason}.`);

      // The balance read and the atomic reservation run together; a reservation for a wallet that
      // turns out too poor is released before anything is signed.
      const [balance, reserved] = await Promise.all([
        this.deps.chain.balance(offer.network, offer.asset, wallet.address).catch(() => undefined),
        this.deps.ledger.reserve({
          paymentId,
          wallet: wallet.address,
          requestId: ctx.requestId,
          service: target.url,
          network: offer.network,
          asset: offer.asset,
          payTo: offer.payTo,
          amount,
          requirement: offer,
          limits: {
            perTransaction: limits.perTransaction,
            perRequest: limits.perRequest,
            daily: limits.daily,
          },
          now: this.now(),
        }),
      ]);
      if (!reserved.ok) {
        return refuse(
          "limit_exceeded",
          `Paying $${base.amount.usd} would exceed the ${reserved.limit} limit of $${formatUsd(reserved.limitAtomic)} ($${formatUsd(reserved.remainingAtomic)} left).`,
          {
            limit: reserved.limit,
            limitUsd: formatUsd(reserved.limitAtomic),
            remainingUsd: formatUsd(reserved.remainingAtomic),
          },
        );
      }
      if (balance === undefined || balance < amount) {
        await this.deps.ledger.transition(
          paymentId,
          "released",
          { error: "balance check failed" },
          this.now(),
        );
        if (balance === undefined)
          return refuse("payment_failed", `Could not read the wallet's balance on ${offer.network}.`);
        return refuse(
          "insufficient_balance",
          `The wallet holds $${formatUsd(balance)}, less than the $${base.amount.usd} price.`,
          { balanceUsd: formatUsd(balance) },
        );
      }
      // The deadline again, now that the reservation exists: the reads above took time.
      if (ctx.deadline - ctx.now() < this.deps.config.minTimeLeftMs) {
        await this.deps.ledger.transition(
          paymentId,
          "released",
          { error: "too little time left" },
          this.now(),
        );
        return refuse(
          "deadline_exceeded",
          "Too little time is left in this request to complete a payment safely.",
        );
      }
      update("reserved");

      return this.signAndSubmit(ctx, {
        target,
        demand,
        index,
        amount,
        paymentId,
        base,
        update,
        signer: signer.signer,
      });
    };
    try {
      return await run();
    } catch (error) {
      this.deps.onError?.(error, "payment step before sending");
      const failure = internalFailure(error);
      update("failed", { reason: failure.code, message: failure.message });
      ctx.recordPayment({
        paymentId,
        status: "failed",
        service: target.url,
        amountUsd: base.amount.usd,
        network: offer.network,
      });
      ctx.reportError(failure);
      return { status: "failed", paymentId, error: { code: failure.code, message: failure.message } };
    }
  }

  private async signAndSubmit(
    ctx: TurnContext,
    p: {
      target: Target;
      demand: PaymentDemand;
      index: number;
      amount: bigint;
      paymentId: string;
      base: { amount: { usd: string }; network: string; payTo: string };
      update: (status: PaymentUpdate["status"], extra?: Partial<PaymentUpdate>) => void;
      signer: SignerAccess;
    },
  ): Promise<PayOutput> {
    const { ledger } = this.deps;
    const summary = (status: LedgerStatus, transaction?: string) =>
      ctx.recordPayment({
        paymentId: p.paymentId,
        status,
        service: p.target.url,
        amountUsd: p.base.amount.usd,
        network: p.base.network,
        ...(transaction ? { transaction } : {}),
      });
    const move = (to: LedgerStatus, fields: Parameters<Ledger["transition"]>[2] = {}) =>
      ledger.transition(p.paymentId, to, fields, this.now());
    const out = (status: PayOutput["status"], extra: Partial<PayOutput> = {}): PayOutput => ({
      status,
      paymentId: p.paymentId,
      amountUsd: p.base.amount.usd,
      network: p.base.network,
      ...extra,
    });

    let headers: Record<string, string>;
    try {
      const signed = await signOffer(p.demand, p.index, p.signer.schemeFor(p.base.network), {
        amount: p.amount,
        payTo: p.base.payTo,
      });
      headers = signed.headers;
      await move("signed", { authorization: signed.authorization });
    } catch (error) {
      this.deps.onError?.(error, "signing");
      await move("failed", { error: "signing failed" });
      p.update("failed", { reason: "signing_failed", message: "The payment could not be signed." });
      summary("failed");
      ctx.reportError(
        new AppError("payment_failed", "The payment could not be signed.", {
          details: { paymentId: p.paymentId },
        }),
      );
      return out("failed", {
        error: { code: "payment_failed", message: "The payment could not be signed." },
      });
    }
    p.update("signed");

    // The intent is on record (signed, with its authorization, then submitted) before anything
    // leaves the process. If the ledger cannot record it, nothing is sent.
    try {
      await move("submitted");
    } catch {
      p.update("unknown", {
        reason: "ledger_unavailable",
        message: "The payment could not be recorded; not sent.",
      });
      summary("unknown");
      ctx.reportError(
        new AppError("payment_failed", "The payment could not be recorded, so it was not sent."),
      );
      return out("unknown", {
        error: { code: "payment_failed", message: "The payment could not be recorded; not sent." },
      });
    }
    p.update("submitted");

    let response: SafeResponse | undefined;
    try {
      response = await this.deps.fetch(p.target.url, {
        method: p.target.method,
        headers: { ...headers, ...(p.target.body ? { "content-type": "application/json" } : {}) },
        ...(p.target.body ? { body: p.target.body } : {}),
        // Deliberately not the client's signal: a payment in flight finishes and is recorded.
        signal: AbortSignal.timeout(this.deps.config.serviceTimeoutMs),
        // The payment goes to the origin that issued the demand and nowhere else: a redirect to
        // another origin comes back as the (unclear) answer instead of being followed.
        allowOrigin: (origin) => origin === new URL(p.target.url).origin,
        followCrossOrigin: false,
      });
    } catch {
      response = undefined;
    }

    try {
      return await this.recordOutcome(ctx, p, response, { move, summary, out });
    } catch {
      // The ledger failed after the payment left: the row stays pending and the reconciler
      // resolves it from the chain; the client hears that the outcome is unclear.
      p.update("unknown", {
        reason: "ledger_unavailable",
        message: "The outcome could not be recorded yet.",
      });
      summary("unknown");
      ctx.reportError(
        new AppError(
          "payment_failed",
          "The payment was sent but its outcome could not be recorded yet; it will be reconciled.",
          {
            details: { paymentId: p.paymentId },
          },
        ),
      );
      return out("unknown", {
        error: { code: "payment_failed", message: "The outcome could not be recorded yet." },
      });
    }
  }

  /**
   * Ask the reconciler once, bounded in time (the stream has a deadline). If the background sweep
   * resolved the row first, the transition race is lost harmlessly: read what it recorded.
   */
  private async resolveSoon(paymentId: string): Promise<PaymentRecord | undefined> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), RESOLVE_NOW_MS);
    });
    try {
      return await Promise.race([
        this.deps.reconciler.resolve(paymentId).catch(() => this.deps.ledger.get(paymentId)),
        timeout,
      ]);
    } catch {
      return undefined;
    } finally {
      clearTimeout(timer);
    }
  }

  private async recordOutcome(
    ctx: TurnContext,
    p: Parameters<PaymentPipeline["signAndSubmit"]>[1],
    response: SafeResponse | undefined,
    h: {
      move: (to: LedgerStatus, fields?: Parameters<Ledger["transition"]>[2]) => Promise<PaymentRecord>;
      summary: (status: LedgerStatus, transaction?: string) => void;
      out: (status: PayOutput["status"], extra?: Partial<PayOutput>) => PayOutput;
    },
  ): Promise<PayOutput> {
    const { move, summary, out } = h;
    const settlement = response ? readSettlement((n) => response.headers.get(n)) : undefined;
    if (response && response.status >= 200 && response.status < 300 && settlement?.success) {
      await move("settled", {
        txHash: settlement.transaction,
        ...(settlement.payer ? { payer: settlement.payer } : {}),
      });
      p.update("settled", {
        transaction: settlement.transaction,
        ...(settlement.payer ? { payer: settlement.payer } : {}),
      });
      summary("settled", settlement.transaction);
      return out("paid", {
        transaction: settlement.transaction,
        ...(settlement.payer ? { payer: settlement.payer } : {}),
        data: untrustedData(response),
      });
    }

    // Anything else after sending is unclear: it counts as spent, is never signed again, and the
    // reconciler resolves it from the chain.
    const reason = unclearReason(response);
    await move("unknown", { error: reason.detail });
    const resolved = await this.resolveSoon(p.paymentId);
    const finalStatus = resolved?.status ?? "unknown";
    if (resolved && finalStatus === "settled" && resolved.txHash) {
      p.update("settled", {
        transaction: resolved.txHash,
        ...(resolved.payer ? { payer: resolved.payer } : {}),
      });
      summary("settled", resolved.txHash);
    } else {
      p.update(finalStatus === "failed" ? "failed" : "unknown", {
        reason: reason.code,
        message: reason.message,
      });
      summary(finalStatus === "failed" ? "failed" : "unknown");
    }
    // Settled per the chain: the payment did not fail, the service failed to deliver its answer.
    const error =
      finalStatus === "settled"
        ? {
            code: "service_unavailable" as const,
            message: `The payment settled on chain${resolved?.txHash ? ` (${resolved.txHash})` : ""}, but the service did not return its answer.`,
          }
        : { code: reason.errorCode, message: reason.message };
    ctx.reportError(new AppError(error.code, error.message, { details: { paymentId: p.paymentId } }));
    return out(finalStatus === "settled" ? "paid" : finalStatus === "failed" ? "failed" : "unknown", {
      ...(resolved?.txHash ? { transaction: resolved.txHash } : {}),
      ...(response && response.status < 300 ? { data: untrustedData(response) } : {}),
      error,
    });
  }
}

function unclearReason(response: SafeResponse | undefined): {
  code: string;
  errorCode: ErrorCode;
  message: string;
  detail: string;
} {
  if (!response) {
    return {
      code: "no_response",
      errorCode: "payment_failed",
      message:
        "The service did not answer after the payment was sent; the outcome is being checked on chain.",
      detail: "no response after sending",
    };
  }
  if (response.status === 402) {
    const demand = readPaymentDemand((n) => response.headers.get(n), parseBody(response));
    const why = demand?.error ?? "payment rejected";
    if (/insufficient/i.test(why)) {
      return {
        code: why,
        errorCode: "insufficient_balance",
        message: "The payment was rejected: insufficient funds.",
        detail: why,
      };
    }
    return {
      code: why,
      errorCode: "payment_failed",
      message: `The service did not accept the payment (${why.slice(0, 80)}); it will not be paid again automatically.`,
      detail: `402 after paying: ${why.slice(0, 200)}`,
    };
  }
  if (response.status >= 200 && response.status < 300) {
    return {
      code: "no_settlement_proof",
      errorCode: "payment_failed",
      message: "The service answered without confirming settlement; the outcome is being checked on chain.",
      detail: `HTTP ${response.status} without a settlement response`,
    };
  }
  return {
    code: `http_${response.status}`,
    errorCode: "payment_failed",
    message: `The service failed (HTTP ${response.status}) after the payment was sent; the outcome is being checked on chain.`,
    detail: `HTTP ${response.status} after sending`,
  };
}

/** An unexpected failure as the client and the model may see it: a stable code and a short sentence. */
function internalFailure(error: unknown): AppError {
  if (error instanceof AppError) return error;
  return new AppError("internal", "An internal step of the payment failed; nothing was paid.");
}

function fetchError(error: unknown, url: string): AppError {
  if (error instanceof SafeFetchBlockedError && error.reason === "origin_not_allowed") {
    return new AppError(
      "limit_exceeded",
      `${error.message} by the spending limits (allowedServices); nothing was sent there.`,
      { details: { limit: "allowedServices" } },
    );
  }
  if (error instanceof SafeFetchBlockedError) {
    return new AppError(
      "payment_unavailable",
      `Requests to ${url} are not allowed by this server (${error.reason}).`,
    );
  }
  if (error instanceof AppError) return error;
  return new AppError("service_unavailable", "The service could not be reached.", {
    details: { service: url },
  });
}
