import type { WalletSigningRequest } from "../../chains/index.js";
import { formatUsd } from "../../money/index.js";
import type { SafeResponse } from "../../outbound/index.js";
import { INTENT_STEPS, type PaymentStatus, type PaymentUpdate } from "../../protocol/index.js";
import type { Ledger, PaymentRecord, ReserveInput, TabRefusal, TransitionFields } from "../ports/index.js";
import {
  assertTransition,
  type BudgetBase,
  isLedgerStatus,
  type LedgerStatus,
  type LimitRefusal,
  type PaymentObserver,
  type PaymentOutcome,
  type Reason,
  type Requirement,
  type SpendLimits,
  type Unclear,
} from "../rules/index.js";
import { type RunHooks, signatureHashOf, stepEvent, tell } from "./events.js";
import { crashOf, outcomeOf, type RunFacts, reportFailure, sayings, summaryOf, updateOf } from "./report.js";

export type { RunFacts } from "./report.js";
/**
 * One payment, from its quote to its outcome. Every step moves the ledger row, streams the `p:` update
 * and records the turn's summary together, through the state machine (`state.ts`), so the three never
 * disagree; each step is told to the events' watchers too (events.ts). docs/payments.md has the states.
 */
export class PaymentRun {
  private status: PaymentStatus = "quoted";
  /** Whether the `quoted` update went out: it always goes first, whatever step comes next. */
  private announced = false;
  /** Whether the ledger holds a row for this payment (from the reservation, or the approval request, on). */
  private recorded = false;
  /** The budget as it stood before this payment; every update carries the meter from it. */
  private budget: BudgetBase | undefined;
  /** The authorization the intent recorded: delivery checks a claimed settlement against it. */
  intent: Record<string, string> | undefined;

  constructor(
    private readonly ledger: Ledger,
    private readonly observer: PaymentObserver,
    readonly facts: RunFacts,
    private readonly now: () => Date,
    private readonly hooks: RunHooks = {},
  ) {}

  get paymentId(): string {
    return this.facts.paymentId;
  }

  /** A payment that waited for the wallet, taken up again from its row (maybe by another process). */
  static resume(
    ledger: Ledger,
    observer: PaymentObserver,
    record: PaymentRecord & { serviceName?: string },
    now: () => Date,
    hooks: RunHooks = {},
  ): PaymentRun {
    const run = new PaymentRun(ledger, observer, record, now, hooks);
    run.status = "awaiting_approval";
    run.announced = true;
    run.recorded = true;
    return run;
  }

  /** From now on every update carries the budget meter, computed from this base. */
  measure(budget: BudgetBase): void {
    this.budget = budget;
  }

  /** The cost estimate, before anything leaves the process (with the reservation's meter, or first). */
  quoted(): void {
    if (this.announced) return;
    this.announced = true;
    const message = sayings.quoted(this.facts);
    this.observer.update(updateOf(this.facts, "quoted", this.budget, { message }));
    this.tell("quoted", { message });
  }

  /** Refused before anything was signed or recorded: nothing happened, and the client hears why. */
  refuse(reason: Reason, message: string, details: Record<string, unknown> = {}): PaymentOutcome {
    this.step("refused", { reason, message });
    return this.failure("refused", reason, message, { priceUsd: formatUsd(this.facts.amount), ...details });
  }

  /** Stop and ask the user's wallet: stored (holding no budget) with what it signs; paid only once approved. */
  async awaitApproval(input: {
    requirement: Requirement;
    caller: string | null;
    /** What completes the payment later (approval.ts); plain JSON, no signature. */
    stored: unknown;
    sign: WalletSigningRequest;
    expiresAt: Date;
  }): Promise<PaymentOutcome> {
    const { facts } = this;
    const { serviceName: _name, tabMeter: _tab, openTab: _open, ...row } = facts;
    await this.ledger.recordAwaiting({
      ...row,
      caller: input.caller,
      requirement: input.requirement,
      approval: input.stored,
      expiresAt: input.expiresAt,
      now: this.now(),
    });
    this.recorded = true;
    const expiresAt = input.expiresAt.toISOString();
    this.step("awaiting_approval", {
      message: sayings.approve(facts, input.expiresAt),
      approval: { wallet: facts.wallet, expiresAt, sign: input.sign },
    });
    return this.outcome("awaiting_approval", { approvalExpiresAt: expiresAt });
  }

  /**
   * The wallet approved: check-and-reserve against the limits as they are now, and the intent to
   * send, in one durable write (the row moves to `submitted`). A limit refusal leaves it waiting.
   */
  async approve(input: {
    limits: SpendLimits;
    authorization: Record<string, string>;
  }): Promise<LimitRefusal | { ok: false; notAwaiting: string } | undefined> {
    const result = await this.ledger.approve({
      paymentId: this.facts.paymentId,
      limits: input.limits,
      authorization: input.authorization,
      now: this.now(),
    });
    if (!result.ok) return result;
    this.intent = input.authorization;
    for (const status of INTENT_STEPS) this.step(status);
    return undefined;
  }

  /** The user declined in the wallet: nothing is paid, ever, with this payment. */
  async reject(): Promise<PaymentOutcome> {
    await this.move("rejected", { error: "declined in the wallet" }, true);
    this.step("rejected", { message: "Declined: nothing was signed or paid." });
    return this.outcome("rejected");
  }

  /** Too late: the authorization's window (or the Solana blockhash) has passed unused. */
  async expire(): Promise<void> {
    await this.move("expired", { error: "approval window passed" }, true);
    this.step("expired", { message: "The approval came too late; nothing was paid." });
  }

  /** The service's terms changed before the approval could be used: never paid. */
  async termsChanged(message: string): Promise<void> {
    await this.move("failed", { error: "price_changed" }, true);
    this.step("failed", { reason: "price_changed", message });
  }

  /**
   * Check-and-reserve and the intent to send, in one durable write: the row is born `submitted`
   * with the authorization the reconciler needs, before the payment leaves the process. A limit
   * that refuses it returns the refusal, and the in-memory signature is dropped unseen.
   */
  async reserveAndRecordIntent(
    input: Pick<ReserveInput, "limits" | "tab"> & {
      requirement: Requirement;
      authorization: Record<string, string>;
      asset?: string; // a tab's spelling of the offer's asset
    },
  ): Promise<LimitRefusal | TabRefusal | undefined> {
    const { serviceName: _name, tabMeter: _tab, openTab: _open, ...row } = this.facts;
    const { authorization, ...rest } = input;
    const reserved = await this.ledger.reserve({
      ...row,
      ...rest,
      intent: { authorization },
      now: this.now(),
    });
    if (!("tab" in reserved)) this.measure({ limits: input.limits, snapshot: reserved.budget });
    const left = reserved.ok ? reserved.tabLeftAtomic : undefined;
    if (this.facts.tabMeter && left !== undefined)
      this.facts.tabMeter.left = { atomic: `${left}`, usd: formatUsd(left) };
    this.quoted();
    if (!reserved.ok) return reserved;
    this.recorded = true;
    this.intent = input.authorization;
    for (const status of INTENT_STEPS) this.step(status);
    return undefined;
  }

  /**
   * Settled, with the service's answer: the one happy ending. The move to `settled` is written
   * beside the answer when the observer holds it (the turn waits for it before `d:`), else awaited;
   * its `p:` line follows the durable write either way. A failed write leaves the row pending for
   * the reconciler (it finds the settlement on chain); the answer is not withheld.
   */
  async settled(settlement: { transaction: string; payer?: string }, response: SafeResponse) {
    const payer = settlement.payer ? { payer: settlement.payer } : {};
    const proof = { transaction: settlement.transaction, ...payer };
    const paid = this.outcome("paid", { ...proof, response });
    const recording = this.move("settled", { txHash: settlement.transaction, ...payer }).then(
      () => {
        this.step("settled", proof);
        return paid;
      },
      (error: unknown) => {
        this.hooks.onError?.(error, "recording a settlement");
        const message = "The payment settled but could not be recorded yet; it will be reconciled.";
        this.step("unknown", { reason: "outcome_unrecorded", message, ...proof });
        return this.failure("unknown", "outcome_unrecorded", message, {}, { ...proof, response });
      },
    );
    if (!this.observer.hold) return recording;
    this.observer.hold(recording);
    return paid;
  }

  /** After sending, the outcome is unclear: recorded `unknown`, still counted as spent, never re-signed. */
  async unclear(unclear: Unclear): Promise<void> {
    await this.move("unknown", { error: unclear.detail });
  }

  /**
   * The end of an unclear payment, once the chain was asked: settled (the service failed to deliver
   * its answer), failed (the chain says no money moved), or still unknown (the reconciler goes on).
   */
  finishUnclear(
    unclear: Unclear,
    resolved: PaymentRecord | undefined,
    response?: SafeResponse,
  ): PaymentOutcome {
    const delivered = response && response.status >= 200 && response.status < 300 ? { response } : {};
    if (resolved?.status === "settled" && resolved.txHash) {
      const proof = { transaction: resolved.txHash, ...(resolved.payer ? { payer: resolved.payer } : {}) };
      this.step("settled", proof);
      // The answer came, and the chain (not the service's word) says the payment landed.
      if (delivered.response) return this.outcome("paid", { ...proof, ...delivered });
      const details = { service: this.facts.service, ...proof };
      return this.failure("paid", "settled_undelivered", sayings.undelivered(proof), details, proof);
    }
    const status = resolved?.status === "failed" ? "failed" : "unknown";
    this.step(status, { reason: unclear.reason, message: unclear.message, detail: unclear.detail });
    return this.failure(status, unclear.reason, unclear.message, { detail: unclear.detail }, delivered);
  }

  /** Failed with nothing sent (signing failed, say): the row, if any, records it. */
  async fail(reason: Reason, message: string): Promise<PaymentOutcome> {
    if (this.recorded) await this.move("failed", { error: reason });
    this.step("failed", { reason, message });
    return this.failure("failed", reason, message);
  }

  /** Another attempt (a quote id paid at once elsewhere) holds the id: nothing sent or reported. */
  heldElsewhere = (): PaymentOutcome => this.outcome("unknown");

  /**
   * A step threw (the ledger went away, say). Before the intent was recorded nothing was sent: it
   * failed. After, the money may be gone: unknown until the reconciler reads the chain, the pending
   * row counted as spent. Either way the client hears a stable code, never the exception's text.
   */
  crashed(error: unknown): PaymentOutcome {
    const crash = crashOf(this.status, this.recorded, error);
    if ("ended" in crash) return this.outcome(crash.ended);
    this.step(crash.status, { reason: crash.reason, message: crash.message });
    return this.failure(crash.status, crash.reason, crash.message);
  }

  /** `strict`: only if the row is still in this run's status (its other steps tolerate a reconciler's). */
  private async move(to: LedgerStatus, fields: TransitionFields, strict = false): Promise<void> {
    assertTransition(this.status, to);
    const only = strict && isLedgerStatus(this.status) ? this.status : undefined;
    await this.ledger.transition(this.facts.paymentId, to, fields, this.now(), only);
  }

  private step(status: PaymentStatus, extra: Partial<PaymentUpdate> = {}): void {
    if (status !== this.status) assertTransition(this.status, status);
    this.quoted();
    this.status = status;
    this.observer.update(updateOf(this.facts, status, this.budget, extra));
    this.observer.summary(summaryOf(this.facts, status, extra));
    this.tell(status, extra);
  }

  private tell(status: PaymentStatus, said: Partial<PaymentUpdate>): void {
    const limits = this.budget?.limits ?? this.hooks.limits;
    tell(this.hooks.events, () => {
      const signatureHash = this.intent && signatureHashOf(this.intent);
      return stepEvent(this.facts, status, this.now(), said, { limits, signatureHash });
    });
  }

  private outcome(status: PaymentOutcome["status"], extra: Partial<PaymentOutcome> = {}): PaymentOutcome {
    return outcomeOf(this.facts, status, extra);
  }

  /** An outcome that ends the turn with its reason's finish reason: reported once, returned. */
  private failure(
    status: PaymentOutcome["status"],
    reason: Reason,
    message: string,
    details: Record<string, unknown> = {},
    extra: Partial<PaymentOutcome> = {},
  ): PaymentOutcome {
    return reportFailure(this.observer, this.facts, { status, reason, message, details, extra });
  }
}
