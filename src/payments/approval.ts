import type { PaymentPayload } from "@x402/core/types";
import {
  type Chains,
  ChainUnreadable,
  familyOf,
  sameAsset,
  type WalletAnswer,
  WalletAnswerMismatch,
  WalletCannotPay,
} from "../chains/index.js";
import { AppError } from "../errors/index.js";
import { formatUsd } from "../money/index.js";
import type { ApprovalAnswer, SpendingLimitsInput, Wallet } from "../protocol/index.js";
import { spentOf } from "./budget.js";
import { type DeliveryDeps, deliver } from "./delivery.js";
import type { Ledger, PaymentRecord } from "./ledger.js";
import type { PaymentObserver, PaymentOutcome } from "./outcome.js";
import type { PaymentPipeline } from "./pipeline.js";
import { checkSpend, isServiceAllowed, type LimitRefusal, type Requirement } from "./policy.js";
import { probe } from "./probe.js";
import { PaymentRun } from "./run.js";
import { IllegalTransitionError } from "./state.js";
import { type StoredApproval, storedServiceName } from "./stored-approval.js";
import { checkSigned, paymentHeaders } from "./x402.js";

/**
 * Approval in the user's own wallet (docs/payments.md, "Approval"; docs/protocol.md has the round
 * trip). The pipeline stops a payment at `awaiting_approval` and stores it with what the wallet
 * signs; a later request answers with the wallet's signature (or a rejection), and this module
 * checks the answer before any stream opens, in the documented order:
 *
 *   400  the payment exists, belongs to this wallet and caller, still awaits approval and has not
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
  answer: ApprovalAnswer;
  wallet: Wallet;
  caller?: string;
  spendingLimits?: SpendingLimitsInput;
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
  pipeline: PaymentPipeline;
  chains: Pick<Chains, "balance" | "connection">;
  now?: () => Date;
  onError?: (error: unknown, context: string) => void;
}

/** Queues a run's updates until the turn's stream exists (the checks run before it opens). */
class QueuedObserver implements PaymentObserver {
  private target: PaymentObserver | undefined;
  private readonly queue: Array<(o: PaymentObserver) => void> = [];
  update: PaymentObserver["update"] = (u) => this.send((o) => o.update(u));
  summary: PaymentObserver["summary"] = (s) => this.send((o) => o.summary(s));
  error: PaymentObserver["error"] = (e) => this.send((o) => o.error(e));
  attach(observer: PaymentObserver): void {
    this.target = observer;
    for (const send of this.queue.splice(0)) send(observer);
  }
  private send(call: (o: PaymentObserver) => void): void {
    if (this.target) call(this.target);
    else this.queue.push(call);
  }
}

function stored(record: PaymentRecord): StoredApproval {
  const approval = record.approval as Partial<StoredApproval> | null;
  if (!approval?.payload || !approval.sign || !approval.target || !approval.window) {
    throw new AppError("approval_not_found", "This payment was never waiting for a wallet's approval.");
  }
  return approval as StoredApproval;
}

function toWalletAnswer(answer: ApprovalAnswer): WalletAnswer | undefined {
  if (answer.kind === "signature") return { signature: answer.signature };
  if (answer.kind === "transaction") return { transaction: answer.transaction };
  return undefined;
}

const sameOffer = (a: Requirement, b: Requirement) =>
  a.scheme === b.scheme &&
  a.network === b.network &&
  sameAsset(a.network, a.asset, b.asset) &&
  a.payTo.toLowerCase() === b.payTo.toLowerCase() &&
  a.amount === b.amount;

/** An amount limit refused an approved payment: which limit, its size, what remained, the price. */
function overLimit(message: string, refusal: LimitRefusal, refused: Record<string, string>): AppError {
  return new AppError(
    "limit_exceeded",
    `Paying ${message} would exceed the ${refusal.limit} limit of $${formatUsd(refusal.limitAtomic)} ($${formatUsd(refusal.remainingAtomic)} left).`,
    {
      details: {
        ...refused,
        limit: refusal.limit,
        limitUsd: formatUsd(refusal.limitAtomic),
        remainingUsd: formatUsd(refusal.remainingAtomic),
      },
    },
  );
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
    const record = await ledger.get(answer.paymentId);
    if (!record) throw new AppError("approval_not_found", "No payment with this id awaits approval.");
    if (record.wallet !== wallet.address) {
      throw new AppError("approval_wrong_wallet", "This payment belongs to another wallet.");
    }
    if ((record.caller ?? null) !== (input.caller ?? null)) {
      throw new AppError("approval_wrong_caller", "This payment was asked for by another caller.");
    }
    const terms = stored(record);
    const observer = new QueuedObserver();
    const run = PaymentRun.resume(
      ledger,
      observer,
      { ...record, ...(terms.serviceName ? { serviceName: terms.serviceName } : {}) },
      this.now,
      this.deps.onError,
    );
    const message = `$${formatUsd(record.amount)} to ${record.service}`;
    if (record.status !== "awaiting_approval") {
      if (record.status === "expired")
        throw new AppError("approval_expired", `The approval window for ${message} has passed.`);
      throw new AppError("approval_used", `The payment of ${message} was already ${record.status}.`, {
        details: { paymentId: record.paymentId, paymentStatus: record.status },
      });
    }
    const limits = this.deps.pipeline.limitsFor(input);
    const snapshot = await ledger.budget(wallet.address, record.requestId, this.now());
    run.measure({ limits, snapshot });
    if (record.expiresAt && record.expiresAt.getTime() <= this.now().getTime()) {
      await run.expire().catch(() => {});
      throw new AppError("approval_expired", `The approval window for ${message} has passed.`, {
        details: { expiresAt: record.expiresAt.toISOString() },
      });
    }

    if (answer.kind === "reject") {
      await run.reject().catch((error: unknown) => this.lostRace(error, record.paymentId, message));
      return this.resumed(record, observer, async () => ({
        status: "rejected",
        paymentId: record.paymentId,
        amountUsd: formatUsd(record.amount),
        network: record.network,
      }));
    }

    const family = familyOf(record.network);
    const reply = toWalletAnswer(answer);
    if (!family || !reply) throw new AppError("approval_invalid", "This answer cannot approve the payment.");
    let completed: PaymentPayload;
    try {
      completed = await family.completeForWallet(
        terms.payload,
        terms.sign,
        reply,
        wallet.address,
        this.deps.chains.connection(record.network),
      );
    } catch (error) {
      // The signature holds, but it could never move this wallet's funds: nothing is signed away.
      if (error instanceof WalletCannotPay) {
        throw new AppError("payment_unavailable", `${error.message} Nothing was paid.`, {
          details: { reason: error.reason },
        });
      }
      // The chain did not answer: no verdict either way, the payment keeps waiting.
      if (error instanceof ChainUnreadable) {
        throw new AppError(
          "payment_failed",
          `Could not check the wallet's signature on ${record.network} (${error.message}). Nothing was paid; send the same answer again.`,
        );
      }
      const why = error instanceof WalletAnswerMismatch ? error.message : "the answer could not be read";
      throw new AppError("approval_invalid", `The approval does not sign the stored payment: ${why}.`);
    }
    const requirement = record.requirement as Requirement;

    // The limits and allow-lists as they are now (an approval cannot outlive a tightened limit).
    const refused = { paymentId: record.paymentId, priceUsd: formatUsd(record.amount) };
    if (!limits.allowedNetworks.includes(record.network)) {
      throw new AppError(
        "limit_exceeded",
        `Paying ${message} on ${record.network} is no longer allowed by your limits.`,
        {
          details: { ...refused, limit: "allowedNetworks", network: record.network },
        },
      );
    }
    if (!isServiceAllowed(record.service, limits)) {
      throw new AppError("limit_exceeded", `Paying ${message} is no longer allowed by your limits.`, {
        details: { ...refused, limit: "allowedServices", service: record.service },
      });
    }
    const check = checkSpend(record.amount, limits, spentOf(snapshot));
    if (!check.ok) throw overLimit(message, check, refused);
    const balance = await this.deps.chains
      .balance(record.network, record.asset, wallet.address)
      .catch(() => undefined);
    if (balance === undefined) {
      throw new AppError("payment_failed", `Could not read the wallet's balance on ${record.network}.`, {
        details: { paymentId: record.paymentId },
      });
    }
    if (balance < record.amount) {
      throw new AppError(
        "insufficient_balance",
        `The wallet holds $${formatUsd(balance)}, less than the $${formatUsd(record.amount)} price.`,
        { details: { ...refused, balanceUsd: formatUsd(balance) } },
      );
    }

    // The service must still ask the same price of the same payee: a changed offer is never paid.
    const probed = await probe(this.deps.fetch, terms.target, {
      signal: input.signal,
      timeoutMs: this.deps.serviceTimeoutMs,
      allowOrigin: (origin) => isServiceAllowed(origin, limits),
    });
    if (probed.kind === "refused") {
      if (probed.reason === "origin_not_allowed") {
        throw new AppError("limit_exceeded", `${record.service} is not allowed: ${probed.message}`, {
          details: { ...refused, limit: "allowedServices", service: record.service },
        });
      }
      throw new AppError(
        "service_unavailable",
        `${record.service} could not be reached to confirm its price: ${probed.message}`,
        { details: { paymentId: record.paymentId, service: record.service } },
      );
    }
    if (probed.kind === "free" || !probed.demand.offers.some((offer) => sameOffer(offer, requirement))) {
      const why = `${record.service} no longer asks $${formatUsd(record.amount)} on ${record.network}; nothing was paid. Ask again for a new quote.`;
      // Only if it still waits: another answer may have approved it meanwhile (its payment goes on).
      await run.termsChanged(why).catch((error: unknown) => this.lostRace(error, record.paymentId, message));
      throw new AppError("price_changed", why, {
        details: { paymentId: record.paymentId, quotedUsd: formatUsd(record.amount) },
      });
    }

    let authorization: Record<string, string>;
    try {
      authorization = checkSigned(
        completed,
        record.network,
        {
          amount: record.amount,
          payTo: record.payTo,
          maxTimeoutSeconds: terms.window,
          nowS: Math.floor(this.now().getTime() / 1000),
        },
        "approval",
      );
    } catch {
      throw new AppError("approval_expired", `The approval window for ${message} has passed.`);
    }
    const reserved = await run.approve({ limits, authorization });
    if (reserved && "notAwaiting" in reserved && reserved.notAwaiting === "expired") {
      throw new AppError("approval_expired", `The approval window for ${message} has passed.`);
    }
    if (reserved && "notAwaiting" in reserved) {
      throw new AppError("approval_used", `The payment of ${message} was already ${reserved.notAwaiting}.`, {
        details: { paymentId: record.paymentId, paymentStatus: reserved.notAwaiting },
      });
    }
    if (reserved) throw overLimit(message, reserved, refused);
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
