import type { Chains } from "../../chains/index.js";
import { AppError } from "../../errors/index.js";
import { formatUsd } from "../../money/index.js";
import type { SpendingLimitsInput, ValidatedApproval, Wallet } from "../../protocol/index.js";
import { networkLabel } from "../../protocol/index.js";
import {
  type KeyGrant,
  type Ledger,
  type PaymentEvents,
  type PaymentPauses,
  type PaymentRecord,
  SameTransactionError,
  type StoredApproval,
  storedGrant,
  storedLimits,
  storedServiceName,
} from "../ports/index.js";
import {
  answerLimits,
  approvalDetails,
  approvalOverLimit,
  checkApproval,
  committedOf,
  type EffectiveLimits,
  IllegalTransitionError,
  isServiceAllowed,
  type LimitsConfig,
  type PaymentObserver,
  type PaymentOutcome,
  type Requirement,
  resolveLimits,
  sameOffer,
  tighterCaps,
} from "../rules/index.js";
import { paymentHeaders, probe } from "../x402/index.js";
import {
  authorizationOf,
  checkAwaiting,
  checkBalance,
  checkOwner,
  completeAnswer,
  refusalError,
  refuseIfStopped,
  stored,
  tellRefusal,
} from "./approval-checks.js";
import { type DeliveryDeps, deliver } from "./delivery.js";
import { tell } from "./events.js";
import { QueuedObserver } from "./queued-observer.js";
import { PaymentRun } from "./run.js";

/**
 * Approval in the user's own wallet (docs/payments.md, "Approval"; docs/protocol.md has the round
 * trip). The pipeline stops a payment at `awaiting_approval` and stores it with what the wallet
 * signs; a later request answers with the wallet's signature (or a rejection), and this module
 * checks the answer before any stream opens, in the documented order:
 *
 *   400  the payment exists, belongs to this wallet and (unless answered on the approval page,
 *        page-approval.ts) this caller, still awaits approval and has not
 *        expired, and the answer signs exactly the stored terms for the wallet (checked on chain:
 *        an EOA's key, or a contract wallet's EIP-1271 answer; 500 when the chain cannot be read);
 *   403  a contract wallet is deployed and the token accepts its signature (payment_unavailable);
 *   403  the limits as they are now (and the allow-lists) still admit it;
 *   402  the balance covers it (500 when it cannot be read);
 *   503  the service still answers, with the same terms (a changed price is refused, never paid);
 *   403  the atomic check-and-reserve (a concurrent payment may have used the budget meanwhile).
 *
 * Then the turn streams the payment as it is sent and settled. Approval comes only from the
 * request's `approval` field: nothing in message text can approve anything.
 */

export interface ResumeInput {
  answer: ValidatedApproval;
  wallet: Wallet;
  caller?: string;
  /** `page`: answered on the approval page, bound to no caller (page-approval.ts); default the caller. */
  via?: "caller" | "page";
  spendingLimits?: SpendingLimitsInput;
  /** The answering caller's key: its caps hold with those the asking key had (the tighter of both). */
  grant?: KeyGrant;
  signal: AbortSignal;
}

/** A payment the wallet answered, checked and, when approved, reserved: it runs inside the turn. */
export interface Resumed {
  paymentId: string;
  /** The service paid (its URL), and its name when known. */
  service: string;
  serviceName?: string;
  /** Continue in the turn: the updates queued so far go out first, then the payment's own. */
  run(observer: PaymentObserver): Promise<PaymentOutcome>;
}

export interface ApprovalDeps extends DeliveryDeps {
  ledger: Ledger;
  /** The server's limits; a request's own `spendingLimits` narrow them (as for any payment). */
  limits: LimitsConfig;
  chains: Pick<Chains, "balance" | "connection" | "confirm">;
  now?: () => Date;
  onError?: (error: unknown, context: string) => void;
  /** Told the wallet's answers and the resumed payments' steps (ports/events.ts); never waited on. */
  events?: PaymentEvents;
  pauses?: PaymentPauses; // the operator's kill switch, read before an approval is reserved and after
}

export class ApprovalDesk {
  private readonly now: () => Date;

  constructor(private readonly deps: ApprovalDeps) {
    this.now = deps.now ?? (() => new Date());
  }

  /** Check a wallet's answer; throws AppError (with the documented status) when it cannot be used. */
  async resume(input: ResumeInput): Promise<Resumed> {
    const { ledger } = this.deps;
    const { answer, wallet } = input;
    const record = checkOwner(
      await ledger.get(answer.paymentId),
      wallet,
      input.via === "page" ? { kind: "page" } : { kind: "caller", caller: input.caller },
    );
    const terms = stored(record);
    const observer = new QueuedObserver();
    const run = PaymentRun.resume(
      ledger,
      observer,
      { ...record, ...(terms.serviceName ? { serviceName: terms.serviceName } : {}) },
      this.now,
      { onError: this.deps.onError, events: this.deps.events },
    );
    const message = `$${formatUsd(record.amount)} to ${record.service}`;
    checkAwaiting(record, message);
    // The key's caps and the limits: those it was asked under, narrowed by the answer's, never wider.
    const grant = tighterCaps(input.grant, storedGrant(terms));
    const asked = answerLimits(this.deps.limits, storedLimits(terms), input.spendingLimits);
    const limits = resolveLimits(this.deps.limits, asked, grant);
    const counted = limits.callerDaily !== undefined ? (record.caller ?? undefined) : undefined;
    const snapshot = await ledger.budget(wallet.address, record.scopeId, this.now(), counted);
    run.measure({ limits, snapshot });
    if (record.expiresAt && record.expiresAt.getTime() <= this.now().getTime()) {
      await run.expire().catch(() => {});
      throw new AppError("approval_expired", `The approval window for ${message} has passed.`, {
        details: { expiresAt: record.expiresAt.toISOString() },
      });
    }
    if (answer.kind === "reject") {
      await run.reject().catch((error: unknown) => this.lostRace(error, record.paymentId, message));
      this.answered(record, input, "declined");
      return this.resumed(record, observer, async () => ({
        status: "rejected",
        paymentId: record.paymentId,
        amountUsd: formatUsd(record.amount),
        network: record.network,
      }));
    }
    const completed = await completeAnswer(this.deps.chains, record, terms, answer, wallet);
    // The wallet's own signature over the stored terms; what the checks make of it is told apart.
    this.answered(record, input, "approved");
    try {
      // The limits and allow-lists in force now: an approval cannot outlive a tightened limit.
      const fits = checkApproval(record, limits, committedOf(snapshot));
      if (!fits.ok) throw refusalError(fits);
      await checkBalance(this.deps.chains, record, wallet);
      await this.confirmTerms(input.signal, { record, terms, limits, run, message });
      const authorization = authorizationOf(completed, record, terms, message, this.now());
      await refuseIfStopped(this.deps.pauses, record);
      await this.approve(run, limits, authorization, record, message);
    } catch (error) {
      tellRefusal(this.deps.events, { record, wallet, at: this.now() }, error);
      throw error;
    }
    await refuseIfStopped(this.deps.pauses, record, run); // stopped while it reserved: failed, told as such
    const headers = paymentHeaders(completed);
    return this.resumed(record, observer, async () => {
      try {
        return await deliver(this.deps, run, terms.target, headers);
      } catch (error) {
        this.deps.onError?.(error, "approved payment");
        return run.crashed(error);
      }
    });
  }

  /** The wallet answered (its signature checked, or its caller's decline taken). */
  private answered(record: PaymentRecord, input: ResumeInput, answer: "approved" | "declined"): void {
    tell(this.deps.events, () => ({
      kind: "approval_answered",
      at: this.now(),
      paymentId: record.paymentId,
      via: input.via ?? "caller",
      wallet: input.wallet.address,
      answer,
    }));
  }

  /** The service must still ask the same price of the same payee: a changed offer is never paid. */
  private async confirmTerms(
    signal: AbortSignal,
    at: {
      record: PaymentRecord;
      terms: StoredApproval;
      limits: EffectiveLimits;
      run: PaymentRun;
      message: string;
    },
  ): Promise<void> {
    const { record, terms, limits, run, message } = at;
    const requirement = record.requirement as Requirement;
    const probed = await probe(this.deps.fetch, terms.target, {
      signal,
      timeoutMs: this.deps.serviceTimeoutMs,
      allowOrigin: (origin) => isServiceAllowed(origin, limits),
    });
    if (probed.kind === "refused") {
      if (probed.reason === "origin_not_allowed") {
        throw new AppError("limit_exceeded", `${record.service} is not allowed: ${probed.message}`, {
          details: { ...approvalDetails(record), limit: "allowedServices", service: record.service },
        });
      }
      throw new AppError(
        "service_unavailable",
        `${record.service} could not be reached to confirm its price: ${probed.message}`,
        { details: { paymentId: record.paymentId, service: record.service } },
      );
    }
    if (probed.kind === "free" || !probed.demand.offers.some((offer) => sameOffer(offer, requirement))) {
      const why = `${record.service} no longer asks $${formatUsd(record.amount)} on ${networkLabel(record.network)}; nothing was paid. Ask again for a new quote.`;
      // Only if it still waits: another answer may have approved it meanwhile (its payment goes on).
      await run.termsChanged(why).catch((error: unknown) => this.lostRace(error, record.paymentId, message));
      throw new AppError("price_changed", why, {
        details: { paymentId: record.paymentId, quotedUsd: formatUsd(record.amount) },
      });
    }
  }

  /** The atomic check-and-reserve: a concurrent payment may have used the budget meanwhile. */
  private async approve(
    run: PaymentRun,
    limits: EffectiveLimits,
    authorization: Record<string, string>,
    record: PaymentRecord,
    message: string,
  ): Promise<void> {
    const reserved = await run.approve({ limits, authorization }).catch((error: unknown) => {
      if (!(error instanceof SameTransactionError)) throw error;
      throw new AppError(
        "approval_invalid",
        `The transaction signed for ${message} is another payment's too (the same transfer within one blockhash): it is not sent. Ask again for a new quote.`,
        { details: { paymentId: record.paymentId } },
      );
    });
    if (reserved && "notAwaiting" in reserved && reserved.notAwaiting === "expired") {
      throw new AppError("approval_expired", `The approval window for ${message} has passed.`);
    }
    if (reserved && "notAwaiting" in reserved) {
      throw new AppError("approval_used", `The payment of ${message} was already ${reserved.notAwaiting}.`, {
        details: { paymentId: record.paymentId, paymentStatus: reserved.notAwaiting },
      });
    }
    if (reserved) throw refusalError(approvalOverLimit(record, reserved));
  }

  /**
   * A step decided on the row as it was read failed because another request (or the reconciler)
   * moved it since: say what it is now, as the first check would have.
   */
  private async lostRace(error: unknown, paymentId: string, message: string): Promise<never> {
    if (!(error instanceof IllegalTransitionError)) throw error;
    const now = await this.deps.ledger.get(paymentId);
    if (now?.status === "expired")
      throw new AppError("approval_expired", `The approval window for ${message} has passed.`);
    throw new AppError(
      "approval_used",
      `The payment of ${message} was already ${now?.status ?? "answered"}.`,
      { details: { paymentId, ...(now ? { paymentStatus: now.status } : {}) } },
    );
  }

  /**
   * The payment goes on at once, whatever becomes of the turn (a client that leaves now must not
   * strand an approved, reserved payment); its updates wait for the turn's stream.
   */
  private resumed(
    record: PaymentRecord,
    observer: QueuedObserver,
    finish: () => Promise<PaymentOutcome>,
  ): Resumed {
    const outcome = finish();
    const name = storedServiceName(record);
    return {
      paymentId: record.paymentId,
      service: record.service,
      ...(name ? { serviceName: name } : {}),
      run: async (turn) => {
        observer.attach(turn);
        return outcome;
      },
    };
  }
}
