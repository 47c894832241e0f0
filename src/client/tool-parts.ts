import type { UIMessage, UIMessageChunk } from "ai";
import { networkLabel } from "../protocol/networks.js";
import type { ApprovalRequest, PaymentStatus, PaymentUpdate } from "../protocol/stream.js";
import { describeApproval } from "./approval.js";

/**
 * Payments that wait for the user's wallet, as the AI SDK's own tool-approval parts (ai@6): a UI
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
 *   (`failed`, `expired`, `refused`, `released`, `unknown`) -> `tool-output-error`.
 */
export const PAYMENT_TOOL = "x402_payment";

/** The tool call's input: the payment as quoted. */
export interface PaymentToolInput {
  paymentId: string;
  service: { url: string; name?: string | undefined };
  amount?: { atomic: string; usd: string; asset?: string | undefined } | undefined;
  network?: string | undefined;
  payTo?: string | undefined;
}

/** The tool call's output once the payment settled. */
export interface PaymentToolOutput {
  paymentId: string;
  status: PaymentStatus;
  transaction?: string | undefined;
  payer?: string | undefined;
  network?: string | undefined;
  amount?: { atomic: string; usd: string } | undefined;
}

/** The tools of {@link PaymentUIMessage}: one, the payment. */
export type PaymentTools = { [PAYMENT_TOOL]: { input: PaymentToolInput; output: PaymentToolOutput } };

/** `part.approval.descriptor` of a payment's tool part: what the wallet would sign, in words. */
export interface PaymentApprovalDescriptor {
  kind: "x402-payment";
  /** One sentence: "Pay $0.01 in USD Coin to 0x15d3… for Weather (http://…) on Base, before …". */
  summary: string;
  paymentId: string;
  /** The amount in USD and in the token's atomic units; `token` is the EIP-712 domain's name on EVM. */
  amount: { usd: string; atomic: string; token: string };
  /** The payee's full address. */
  payee: string;
  service: { url: string; name: string };
  /** The CAIP-2 id and its name for people. */
  network: { id: string; name: string };
  /** The wallet that signs and pays. */
  wallet: string;
  /** ISO-8601: after this the approval can no longer be used. */
  expiresAt: string;
  /** USD each budget keeps after this payment (absent where the update carried no meter). */
  budgetAfter: { perRequest?: string; daily?: string };
  /** How the wallet is asked: `eth_signTypedData_v4` or `signTransaction`. */
  method: string;
  /** Where the EVM typed data disagrees with the quote: never sign when it is not empty. */
  mismatches: string[];
  /**
   * Why the last answer was refused, when the part asks again: the payment still waits and can be
   * approved again (a signature the service refused, the service or the chain unreachable...).
   */
  refusal?: string;
}

/** A CAIP-2 network's name for people (the id itself when it is not a known one; src/protocol/networks.ts). */
export function networkName(network: string): string {
  return networkLabel(network);
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}

/** An update that awaits the wallet, with its request. */
export type AwaitingUpdate = PaymentUpdate & { approval: ApprovalRequest };

export function isAwaiting(update: PaymentUpdate): update is AwaitingUpdate {
  return update.status === "awaiting_approval" && update.approval !== undefined;
}

/** The readable descriptor of a payment awaiting approval. */
export function describePaymentApproval(update: AwaitingUpdate): PaymentApprovalDescriptor {
  const summary = describeApproval(update);
  const sign = update.approval.sign;
  const domainName = sign.kind === "evm-typed-data" ? sign.typedData.domain.name : undefined;
  const token = typeof domainName === "string" && domainName !== "" ? domainName : "USDC";
  const usd = update.amount?.usd ?? "?";
  const network = update.network ?? "";
  const service = { url: update.service.url, name: update.service.name ?? hostOf(update.service.url) };
  const budgetAfter: PaymentApprovalDescriptor["budgetAfter"] = {};
  const perRequest = update.budget?.perRequest.remainingAfter?.usd;
  const daily = update.budget?.daily.remainingAfter?.usd;
  if (perRequest !== undefined) budgetAfter.perRequest = perRequest;
  if (daily !== undefined) budgetAfter.daily = daily;
  const payee = update.payTo ?? "";
  return {
    kind: "x402-payment",
    summary:
      `Pay $${usd} in ${token} to ${payee} for ${service.name} (${service.url}) on ${networkName(network)}, ` +
      `from ${update.approval.wallet}, before ${update.approval.expiresAt}.`,
    paymentId: update.paymentId,
    amount: { usd, atomic: update.amount?.atomic ?? "", token },
    payee,
    service,
    network: { id: network, name: networkName(network) },
    wallet: update.approval.wallet,
    expiresAt: update.approval.expiresAt,
    budgetAfter,
    method: sign.method,
    mismatches: summary.mismatches,
  };
}

function inputOf(update: PaymentUpdate): PaymentToolInput {
  return {
    paymentId: update.paymentId,
    service: { url: update.service.url, ...(update.service.name ? { name: update.service.name } : {}) },
    ...(update.amount ? { amount: update.amount } : {}),
    ...(update.network ? { network: update.network } : {}),
    ...(update.payTo ? { payTo: update.payTo } : {}),
  };
}

function outputOf(update: PaymentUpdate): PaymentToolOutput {
  return {
    paymentId: update.paymentId,
    status: update.status,
    ...(update.transaction ? { transaction: update.transaction } : {}),
    ...(update.payer ? { payer: update.payer } : {}),
    ...(update.network ? { network: update.network } : {}),
    ...(update.amount ? { amount: { atomic: update.amount.atomic, usd: update.amount.usd } } : {}),
  };
}

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

/** The open payment tool parts (ids) of a message: those still `approval-requested` or `approval-responded`. */
export function openPaymentParts(message: Pick<UIMessage, "parts"> | undefined): PaymentToolPart[] {
  if (!message) return [];
  return message.parts.flatMap((part) => {
    const p = part as Partial<PaymentToolPart> & { type: string };
    return p.type === `tool-${PAYMENT_TOOL}` &&
      typeof p.toolCallId === "string" &&
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
  approval: { id: string; approved?: boolean; reason?: string; descriptor?: unknown };
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

  /** The chunks one `p:` update adds after its `data-payment` chunk. */
  update(update: PaymentUpdate): UIMessageChunk[] {
    const id = update.paymentId;
    if (isAwaiting(update)) {
      if (this.open.has(id)) return [];
      this.open.add(id);
      const descriptor = describePaymentApproval(update);
      const title = `Pay $${descriptor.amount.usd} to ${descriptor.service.name}`;
      return [
        { type: "tool-input-start", toolCallId: id, toolName: PAYMENT_TOOL, title },
        {
          type: "tool-input-available",
          toolCallId: id,
          toolName: PAYMENT_TOOL,
          input: inputOf(update),
          title,
        },
        { type: "tool-approval-request", approvalId: id, toolCallId: id, approvalDescriptor: descriptor },
      ];
    }
    if (!this.open.has(id)) return [];
    if (update.status === "settled")
      return this.close(id, { type: "tool-output-available", toolCallId: id, output: outputOf(update) });
    if (update.status === "rejected") return this.close(id, { type: "tool-output-denied", toolCallId: id });
    if (ENDS_IN_ERROR.has(update.status))
      return this.close(id, { type: "tool-output-error", toolCallId: id, errorText: errorTextOf(update) });
    return [];
  }

  /**
   * Before the finish: the answered part, if the turn said nothing final of it, ends in an error,
   * so it never stays `approval-responded` (which would have `useChat` send the answer again).
   */
  finish(): UIMessageChunk[] {
    if (!this.answered || !this.open.has(this.answered)) return [];
    return this.close(this.answered, {
      type: "tool-output-error",
      toolCallId: this.answered,
      errorText: `The service did not report what became of payment ${this.answered}; read it before paying again.`,
    });
  }

  private close(id: string, chunk: UIMessageChunk): UIMessageChunk[] {
    this.open.delete(id);
    return [chunk];
  }
}
