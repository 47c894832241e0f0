import type { AppError, FinishReason } from "../errors/index.js";
import type { FinishPayload, PaymentSummary, PaymentUpdate, StreamEvent } from "../protocol/index.js";
import { PAYMENT_STATUS, textCleaner } from "../protocol/index.js";

/** The model that answered, as the `d:` line names it. */
export interface AnsweredBy {
  model: FinishPayload["model"];
  provider: string;
  modelId: string;
}

/**
 * What one turn has streamed and seen: its payments, the error that ends it, the tokens used. The
 * stream closes with the finish event: tool calls left running in the background after it (a
 * cut-off turn) reach neither the stream nor the finish payload.
 */
export class TurnRecord {
  private readonly payments = new Map<string, PaymentSummary>();
  /** Last update of every payment streamed in this turn, to name the ones still in flight. */
  private readonly updates = new Map<string, PaymentUpdate>();
  private readonly reported = new WeakSet<AppError>();
  private ended = false;
  /** Payments' last ledger writes, running beside their answers: the turn waits for them before `d:`. */
  private readonly held: Promise<unknown>[] = [];
  /** The error the turn ends with (the last one reported). */
  failure: AppError | undefined;
  /** Every error reported, in order (a refusal a later payment of the same call made good is passed over). */
  private readonly failures: AppError[] = [];
  readonly usage = { inputTokens: 0, outputTokens: 0, totalTokens: 0 };

  constructor(private readonly emit: (event: StreamEvent) => void) {}

  /** The model's text, cleaned as one text across its pieces (content.ts). */
  private readonly cleanPiece = textCleaner();

  send(event: StreamEvent): void {
    if (this.ended) return;
    if (event.type !== "text") this.emit(event);
    else {
      const text = this.cleanPiece(event.text);
      if (text) this.emit({ ...event, text });
    }
  }

  /** Stream an error once (`e:`); the turn finishes with the last one's finish reason. */
  readonly reportError = (error: AppError): void => {
    if (this.ended || this.reported.has(error)) return;
    this.reported.add(error);
    this.failure = error;
    this.failures.push(error);
    this.send({ type: "error", error: { code: error.code, message: error.message, ...error.details } });
  };

  readonly emitPayment = (update: PaymentUpdate): void => {
    if (this.ended) return;
    this.updates.set(update.paymentId, update);
    this.send({ type: "payment", payment: update });
  };

  readonly recordPayment = (summary: PaymentSummary): void => {
    if (!this.ended) this.payments.set(summary.paymentId, summary);
  };

  readonly holdPayment = (work: Promise<unknown>): void => {
    if (!this.ended) this.held.push(work);
  };

  /** The held writes not yet awaited (each is handed out once). */
  takeHeld(): Promise<unknown>[] {
    return this.held.splice(0);
  }

  /** Stream the finish event, last, and close the stream. */
  finish(by: AnsweredBy): FinishPayload {
    const all = this.summaries();
    const transactions = all.flatMap((p) => (p.status === "settled" && p.transaction ? [p.transaction] : []));
    const approvals = all.flatMap((p) =>
      p.status === "awaiting_approval" && typeof p.expiresAt === "string"
        ? [{ paymentId: p.paymentId, expiresAt: p.expiresAt }]
        : [],
    );
    let finishReason: FinishReason = "stop";
    const failure = this.standingFailure(all);
    if (failure) finishReason = failure.finishReason;
    else if (approvals.length > 0) finishReason = "approval-required";
    else if (all.some((p) => p.status === "settled")) finishReason = "payment-complete";

    const finish: FinishPayload = {
      finishReason,
      ...(transactions.length > 0 ? { transactionHash: transactions.at(-1) } : {}),
      transactions,
      payments: all,
      usage: this.usage,
      model: by.model,
      provider: by.provider,
      modelId: by.modelId,
      ...(approvals.length > 0 ? { approvals } : {}),
      ...(failure ? { errorCode: failure.code } : {}),
    };
    this.send({ type: "finish", finish });
    this.ended = true;
    return finish;
  }

  /**
   * The last error that still stands. A payment refused before anything was signed for a `maxUsd`
   * below the price (or not a price), whose call the model then made again and paid, is made good:
   * the turn ends as that payment did, not `payment-failed` over money that moved. Any other
   * refusal (a limit, say) stands, whatever was paid beside it.
   */
  private standingFailure(all: PaymentSummary[]): AppError | undefined {
    const order = [...this.payments.keys()];
    const madeGood = (error: AppError) => {
      const paymentId = error.details?.paymentId;
      const refused = typeof paymentId === "string" ? this.payments.get(paymentId) : undefined;
      const reason = error.details?.reason ?? error.code;
      if (refused?.status !== "refused" || (reason !== "price_changed" && reason !== "invalid_max_usd"))
        return false;
      const after = order.indexOf(refused.paymentId);
      return all.some(
        (p) => p.status === "settled" && p.service === refused.service && order.indexOf(p.paymentId) > after,
      );
    };
    return this.failures.findLast((error) => !madeGood(error));
  }

  /**
   * The payments recorded, then those streamed but not yet finished (their tool is still running)
   * with their last known status, marked pending. A recorded payment still in flight (its last
   * write, beside the answer, had not landed when the turn was cut short) is pending too.
   */
  private summaries(): PaymentSummary[] {
    const all = [...this.payments.values()].map((p) =>
      PAYMENT_STATUS[p.status].inFlight && !p.pending ? { ...p, pending: true } : p,
    );
    for (const update of this.updates.values()) {
      if (this.payments.has(update.paymentId) || !PAYMENT_STATUS[update.status].inFlight) continue;
      all.push({
        paymentId: update.paymentId,
        status: update.status,
        service: update.service.url,
        ...(update.amount ? { amountUsd: update.amount.usd } : {}),
        ...(update.network ? { network: update.network } : {}),
        pending: true,
      });
    }
    return all;
  }
}
