import type { UIMessage, UIMessageChunk } from "ai";
import { PAYMENT_STATUSES, type PaymentUpdate } from "../protocol/stream.js";
import { rejectApproval } from "./approval.js";
import type { ApprovalAnswer } from "./request.js";
import { ApprovalSigningError, signApproval, signingErrorText, type TransportSigner } from "./signer.js";
import {
  type AwaitingUpdate,
  describePaymentApproval,
  isAwaiting,
  type PaymentToolPart,
} from "./tool-parts.js";

/**
 * Turning a `useChat` approval response (a payment tool part `approval-responded`) into the
 * `approval` field of the next `POST /api/chat`: declined -> `{reject: true}`; approved -> the
 * signer signs the payment's own request. The request to sign is the one this transport received
 * from the service (kept in memory while it waits), else the message's `data-payment` part of that
 * payment (a conversation restored from storage).
 */

/** The requests awaiting approval this transport has seen, by payment id (the oldest dropped beyond 100). */
export class AwaitingRequests {
  private readonly byId = new Map<string, AwaitingUpdate>();

  remember(update: PaymentUpdate): void {
    if (!isAwaiting(update)) return;
    this.byId.set(update.paymentId, update);
    if (this.byId.size > 100) {
      const oldest = this.byId.keys().next().value;
      if (oldest !== undefined) this.byId.delete(oldest);
    }
  }

  /** The request of a payment: remembered, else the message's `data-payment` part of it. */
  find(paymentId: string, message: Pick<UIMessage, "parts">): AwaitingUpdate | undefined {
    const remembered = this.byId.get(paymentId);
    if (remembered) return remembered;
    for (const part of message.parts) {
      const p = part as { type: string; id?: string; data?: PaymentUpdate };
      if (
        p.type === "data-payment" &&
        p.id === paymentId &&
        p.data?.paymentId === paymentId &&
        isAwaiting(p.data)
      )
        return p.data;
    }
    return undefined;
  }

  forget(paymentId: string): void {
    this.byId.delete(paymentId);
  }
}

/**
 * The answer to send, or why there is none (then nothing is sent). `retry`: the wallet declined or
 * failed to sign; the payment still waits, so its part asks again with this request.
 */
export type AnswerOutcome = { answer: ApprovalAnswer } | { error: string; retry?: AwaitingUpdate };

/** The answer to send for a responded part, or why there is none (then nothing is sent). */
export async function answerFor(
  part: PaymentToolPart,
  message: Pick<UIMessage, "parts">,
  requests: AwaitingRequests,
  signer: TransportSigner | undefined,
  tabFunding = false,
): Promise<AnswerOutcome> {
  const paymentId = part.toolCallId;
  if (part.approval.approved !== true) return { answer: rejectApproval(paymentId) };
  const update = requests.find(paymentId, message);
  if (!update)
    return { error: `The approval request of payment ${paymentId} is not in this chat: nothing was signed.` };
  if (!signer)
    return {
      error: "No wallet was given to sign the payment (the transport's `signer` option): nothing was signed.",
    };
  try {
    return { answer: await signApproval(signer, update, { tabFunding }) };
  } catch (error) {
    // What disagrees with the quote is never signed, so it is not asked again.
    const retry = error instanceof ApprovalSigningError && error.mismatch ? undefined : update;
    const said = signingErrorText(error).replace(/[^.!?]$/, "$&."); // one sentence, then the next
    return { error: `${said} Nothing was paid.`, ...(retry ? { retry } : {}) };
  }
}

/**
 * The turn of an approval that was not sent (or refused before its stream opened): the part ends in
 * `output-error` with the reason, then the finish, then an `error` chunk so `useChat`'s `error` says it too.
 */
export function failedApprovalStream(
  toolCallId: string,
  errorText: string,
  ended?: PaymentUpdate,
): ReadableStream<UIMessageChunk> {
  const chunks: UIMessageChunk[] = [
    { type: "start" },
    // The payment's card says what it is now, not still awaiting approval (data parts replace by id).
    ...(ended ? [{ type: "data-payment" as const, id: ended.paymentId, data: ended }] : []),
    { type: "tool-output-error", toolCallId, errorText },
    { type: "finish", finishReason: "error" },
    { type: "error", errorText },
  ];
  return new ReadableStream<UIMessageChunk>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      controller.close();
    },
  });
}

/** Refusals after which the payment can never be approved (docs/protocol.md): its part ends in an error. */
const FINAL_REFUSALS = new Set([
  "approval_expired",
  "approval_used",
  "approval_not_found",
  "approval_wrong_wallet",
  "approval_wrong_caller",
  "price_changed",
]);

export function isFinalRefusal(code: string): boolean {
  return FINAL_REFUSALS.has(code);
}

/**
 * The payment as a final refusal of its answer says it is now: `expired` for `approval_expired`,
 * the problem's `paymentStatus` for `approval_used`; undefined when the refusal does not say.
 */
export function endedUpdate(
  update: PaymentUpdate,
  code: string,
  problem: Record<string, unknown>,
): PaymentUpdate | undefined {
  const said = code === "approval_expired" ? "expired" : problem.paymentStatus;
  const status = PAYMENT_STATUSES.find((s) => s === said);
  if (!status || status === "awaiting_approval") return undefined;
  // Not its ask ("Approve $0.01 ... before ..."): what became of it, when that can be said (h52).
  const { approval: _asked, message: _ask, ...rest } = update;
  const words = ENDED_WORDS[status];
  return { ...rest, status, ...(words ? { message: words } : {}) };
}

/** What a payment answered elsewhere (another page, the approval page) or lapsed says of itself. */
const ENDED_WORDS: Partial<Record<PaymentUpdate["status"], string>> = {
  expired: "The time to approve has passed: nothing was signed or paid.",
  rejected: "The payment was declined: nothing was signed or paid.",
  settled: "Paid. Its answer did not come to this page; Payments lists the payment.",
  failed: "The payment failed: nothing was paid.",
};

/**
 * An answer the service refused before its stream (or that did not reach it). With `update` (the
 * payment still waits: a signature refused, the service or the chain unreachable...) the part asks
 * again, the reason in its descriptor's `refusal`, so the UI can approve it again; without, it ends
 * in an error. Either way `useChat`'s `error` says why.
 */
export function refusedAnswerStream(
  toolCallId: string,
  errorText: string,
  update: AwaitingUpdate | undefined,
  ended?: PaymentUpdate,
): ReadableStream<UIMessageChunk> {
  if (!update) return failedApprovalStream(toolCallId, errorText, ended);
  const chunks: UIMessageChunk[] = [
    { type: "start" },
    {
      type: "tool-approval-request",
      approvalId: toolCallId,
      toolCallId,
      approvalDescriptor: { ...describePaymentApproval(update), refusal: errorText },
    },
    { type: "finish", finishReason: "error" },
    { type: "error", errorText },
  ];
  return new ReadableStream<UIMessageChunk>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      controller.close();
    },
  });
}
