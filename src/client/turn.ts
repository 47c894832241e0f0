import {
  decodeStream,
  type ErrorPayload,
  type FinishPayload,
  type PaymentUpdate,
  ProtocolError,
  type StreamEvent,
} from "../protocol/stream.js";

/**
 * One turn's answer as the client reads it: the stream's events, decoded by the protocol module's
 * own decoder, checked to end with their `d:` line, and folded into a result.
 */

/** A turn read to its end: the text, each payment as it last stood, the errors and the finish. */
export interface ChatResult {
  text: string;
  /** The latest update of each payment, in the order they first appeared. */
  payments: PaymentUpdate[];
  /** Every `p:` update, in order. */
  updates: PaymentUpdate[];
  errors: ErrorPayload[];
  finish: FinishPayload;
  /** The payments awaiting the wallet's approval (their latest update, with its `approval` request). */
  awaitingApproval: PaymentUpdate[];
}

/**
 * One turn's open stream: iterate it (once) for events, in order, ending with the `finish` event;
 * or `collect()` it. A stream that ends without its `d:` line (the connection dropped) throws
 * `ProtocolError`; an abort throws the signal's reason.
 */
export class ChatTurn implements AsyncIterable<StreamEvent> {
  readonly response: Response;
  /** The service's `X-Request-Id`. */
  readonly requestId: string | undefined;
  /** `X-Chat-Protocol`: the protocol version the service speaks. */
  readonly protocolVersion: string | undefined;
  /** True when the service replayed an earlier outcome for this `Idempotency-Key`. */
  readonly replayed: boolean;
  private used = false;
  private readonly signal: AbortSignal | undefined;

  constructor(response: Response, signal?: AbortSignal) {
    this.response = response;
    this.signal = signal;
    this.requestId = response.headers.get("x-request-id") ?? undefined;
    this.protocolVersion = response.headers.get("x-chat-protocol") ?? undefined;
    this.replayed = response.headers.get("idempotent-replayed") === "true";
  }

  async *[Symbol.asyncIterator](): AsyncIterator<StreamEvent> {
    if (this.used) throw new Error("a ChatTurn can be read once");
    this.used = true;
    const body = this.response.body;
    if (!body) throw new ProtocolError("the response has no body");
    let finished = false;
    try {
      for await (const event of decodeStream(body)) {
        yield event;
        // The turn ends at its d: line, whether or not the connection does (a proxy that holds it).
        if (event.type === "finish") {
          finished = true;
          break;
        }
      }
    } catch (error) {
      if (this.signal?.aborted) throw this.signal.reason;
      throw error;
    } finally {
      await body.cancel().catch(() => {});
    }
    if (!finished) {
      if (this.signal?.aborted) throw this.signal.reason;
      throw new ProtocolError("the stream ended before its d: line");
    }
  }

  /** Stop reading; the service sees a disconnect (payments already under way still finish). */
  async cancel(): Promise<void> {
    await this.response.body?.cancel().catch(() => {});
  }

  /** Read the whole turn; `onEvent` sees each event as it comes. */
  async collect(onEvent?: (event: StreamEvent) => void): Promise<ChatResult> {
    const collector = new TurnCollector();
    for await (const event of this) {
      collector.add(event);
      onEvent?.(event);
    }
    return collector.result();
  }
}

/** Folds events into a {@link ChatResult}; usable on its own with any event source. */
export class TurnCollector {
  private text = "";
  private readonly latest = new Map<string, PaymentUpdate>();
  private readonly updates: PaymentUpdate[] = [];
  private readonly errors: ErrorPayload[] = [];
  private finish: FinishPayload | undefined;

  add(event: StreamEvent): void {
    switch (event.type) {
      case "text":
        this.text += event.text;
        break;
      case "payment":
        this.updates.push(event.payment);
        this.latest.set(event.payment.paymentId, event.payment);
        break;
      case "error":
        this.errors.push(event.error);
        break;
      case "finish":
        this.finish = event.finish;
        break;
    }
  }

  result(): ChatResult {
    if (!this.finish) throw new ProtocolError("the turn has no d: line");
    const payments = [...this.latest.values()];
    return {
      text: this.text,
      payments,
      updates: this.updates,
      errors: this.errors,
      finish: this.finish,
      awaitingApproval: payments.filter((p) => p.status === "awaiting_approval" && p.approval),
    };
  }
}
