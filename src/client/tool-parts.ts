import type { UIMessage, UIMessageChunk } from "ai";
import type { PaymentStatus, PaymentUpdate } from "../protocol/stream.js";
import {
  automaticApprovalReason,
  describePaymentApproval,
  inputOf,
  isAwaiting,
  outputOf,
  PAYMENT_TOOL,
  type PaymentToolInput,
  refusalReason,
} from "./payment-tool.js";

export * from "./payment-tool.js";

/**
 * Every payment of a turn as the AI SDK's own tool-approval parts (ai 7): a UI
 * that renders `useChat`'s tool parts and calls `addToolApprovalResponse` approves or declines a
 * payment without knowing anything of x402. One payment is one tool call of the tool
 * {@link PAYMENT_TOOL} (part type `tool-x402_payment`); its `toolCallId` and its approval's `id`
 * are both the payment id.
 *
 * - `p:` `awaiting_approval` -> `tool-input-start`, `tool-input-available` (input: what is paid,
 *   to whom, for which service) and `tool-approval-request` whose descriptor says it in words
 *   ({@link PaymentApprovalDescriptor}): the part is `approval-requested`;
 * - then, in the turn that answers it: `settled` -> `tool-output-available` (output: the
 *   transaction), `rejected` -> `tool-output-denied` (part `output-denied`), any other end
 *   (`failed`, `expired`, `refused`, `released`, `unknown`) -> `tool-output-error`;
 * - a payment the limits allow without the wallet (its first update past the quote is `reserved`
 *   or later) -> the same tool call, approved automatically: `tool-approval-request` and
 *   `tool-approval-response` with `isAutomatic` and a reason in words (the per-payment limit, what
 *   the request's and the day's budgets keep), then its outcome as above;
 * - one the limits refuse (`refused` first) -> an automatic denial whose reason is the refusal's
 *   code and words, and `tool-output-denied`.
 */

/** Statuses past the quote that only a payment the service took on without the wallet reaches first. */
const AUTOMATIC: ReadonlySet<PaymentStatus> = new Set(["reserved", "signed", "submitted", "settled"]);

const ENDS_IN_ERROR: ReadonlySet<PaymentStatus> = new Set([
  "failed",
  "expired",
  "refused",
  "released",
  "unknown",
]);

function errorTextOf(update: PaymentUpdate): string {
  const why = update.message ?? update.reason ?? "";
  if (update.status === "unknown")
    return `The payment's outcome is unclear (it may have been sent): do not pay again; read payment ${update.paymentId} until it is settled or failed.${why ? ` ${why}` : ""}`;
  return `The payment ended ${update.status}: nothing was paid.${why ? ` ${why}` : ""}`;
}

/** The open payment tool parts of a message that wait for the user: `approval-requested` or `approval-responded`, not automatic. */
export function openPaymentParts(message: Pick<UIMessage, "parts"> | undefined): PaymentToolPart[] {
  if (!message) return [];
  return message.parts.flatMap((part) => {
    const p = part as Partial<PaymentToolPart> & { type: string };
    return p.type === `tool-${PAYMENT_TOOL}` &&
      typeof p.toolCallId === "string" &&
      p.approval?.isAutomatic !== true &&
      (p.state === "approval-requested" || p.state === "approval-responded")
      ? [p as PaymentToolPart]
      : [];
  });
}

/** A payment tool part as `openPaymentParts` finds it. */
export interface PaymentToolPart {
  type: `tool-${typeof PAYMENT_TOOL}`;
  toolCallId: string;
  state: "approval-requested" | "approval-responded";
  input: PaymentToolInput;
  approval: { id: string; approved?: boolean; reason?: string; descriptor?: unknown; isAutomatic?: boolean };
}

/**
 * Follows the payment tool parts of one assistant message through a turn: `open` are the parts the
 * message already has (a resumed turn), `answered` the one this turn's request answers.
 */
export class PaymentToolParts {
  private readonly open: Set<string>;

  constructor(
    open: Iterable<string> = [],
    private readonly answered?: string,
  ) {
    this.open = new Set(open);
  }

  /** Payments this turn approved or denied automatically and has not closed yet. */
  private readonly automatic = new Set<string>();
  /** Every payment this turn has shown a part for. */
  private readonly shown = new Set<string>();

  /** The chunks one `p:` update adds after its `data-payment` chunk. */
  update(update: PaymentUpdate): UIMessageChunk[] {
    const id = update.paymentId;
    if (isAwaiting(update)) {
      if (this.open.has(id)) return [];
      this.open.add(id);
      this.shown.add(id);
      const descriptor = describePaymentApproval(update);
      return [
        ...this.call(update, `Pay $${descriptor.amount.usd} to ${descriptor.service.name}`),
        { type: "tool-approval-request", approvalId: id, toolCallId: id, approvalDescriptor: descriptor },
      ];
    }
    if (!this.open.has(id)) return this.decidedAlone(update);
    if (update.status === "settled")
      return this.close(id, { type: "tool-output-available", toolCallId: id, output: outputOf(update) });
    if (update.status === "rejected") return this.close(id, { type: "tool-output-denied", toolCallId: id });
    if (ENDS_IN_ERROR.has(update.status))
      return this.close(id, { type: "tool-output-error", toolCallId: id, errorText: errorTextOf(update) });
    return [];
  }

  /**
   * A payment decided without the wallet, at its first update past the quote: taken on by the
   * service (`reserved` and on) is an automatic approval whose reason says why; refused by the
   * limits is an automatic denial with the refusal's code and words
   * (docs/clients.md#approvals-as-ai-sdk-tool-approval-parts).
   */
  private decidedAlone(update: PaymentUpdate): UIMessageChunk[] {
    const id = update.paymentId;
    const refused = update.status === "refused";
    if (this.shown.has(id) || !(refused || AUTOMATIC.has(update.status))) return [];
    this.shown.add(id);
    const title = `Pay $${update.amount?.usd ?? "?"} to ${update.service.name ?? update.service.url}`;
    const reason = refused ? refusalReason(update) : automaticApprovalReason(update);
    const chunks: UIMessageChunk[] = [
      ...this.call(update, title),
      { type: "tool-approval-request", approvalId: id, toolCallId: id, isAutomatic: true, reason },
      { type: "tool-approval-response", approvalId: id, approved: !refused, reason },
    ];
    if (refused) return [...chunks, { type: "tool-output-denied", toolCallId: id }];
    this.open.add(id);
    this.automatic.add(id);
    return [...chunks, ...this.update(update)];
  }

  private call(update: PaymentUpdate, title: string): UIMessageChunk[] {
    const id = update.paymentId;
    return [
      { type: "tool-input-start", toolCallId: id, toolName: PAYMENT_TOOL, title },
      { type: "tool-input-available", toolCallId: id, toolName: PAYMENT_TOOL, input: inputOf(update), title },
    ];
  }

  /**
   * Before the finish: the answered part and any automatic one, if the turn said nothing final of
   * them, end in an error, so none stays `approval-responded` (which would have `useChat` send an
   * answer again).
   */
  finish(): UIMessageChunk[] {
    const unsettled = [...this.automatic, ...(this.answered ? [this.answered] : [])];
    return unsettled
      .filter((id) => this.open.has(id))
      .flatMap((id) =>
        this.close(id, {
          type: "tool-output-error",
          toolCallId: id,
          errorText: `The service did not report what became of payment ${id}; read it before paying again.`,
        }),
      );
  }

  private close(id: string, chunk: UIMessageChunk): UIMessageChunk[] {
    this.open.delete(id);
    this.automatic.delete(id);
    return [chunk];
  }
}
