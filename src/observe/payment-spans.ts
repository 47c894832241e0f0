import {
  type Attributes,
  type Context,
  context,
  type Span,
  SpanStatusCode,
  type Tracer,
  trace,
} from "@opentelemetry/api";
import { formatUsd } from "../money/index.js";
import type { PaymentEvent, PaymentEvents } from "../payments/index.js";
import { PAYMENT_STATUS, type PaymentStatus } from "../protocol/index.js";

/**
 * Payment spans from the payment events port (docs/deploy.md#traces-and-metrics): one `payment`
 * span per payment, from its first step (`quoted`) to the status it leaves flight with (final,
 * `unknown` or `awaiting_approval`: the wallet's answer or the reconciler come later, in their own
 * trace), with a child span per phase: `payment.admission` (quoted -> refused, awaiting approval
 * or failed), `payment.reserve` (quoted -> reserved: admission, the balance and the durable
 * reservation), `payment.sign`, `payment.submit`, `payment.settle` (submitted -> settled, failed or
 * unknown). A payment seen again after it left flight (approved in a later request, or declined
 * or expired) opens a new `payment` span there, with `payment.first_status`.
 * The reconciler's resolutions are `payment.reconcile` spans, the wallet's answers
 * `payment.approval_answered`, refusals before a payment existed `payment.refused`. Events are emitted inside the request that pays, so the active
 * context is the parent: a chat turn's payments are children of its span.
 *
 * Attributes: payment.id, payment.amount_usd (decimal string), payment.asset, payment.network,
 * payment.payee_host, payment.status, payment.refusal_reason, caller. Nothing secret: events
 * carry no key, token or signature.
 */

/** Open payments kept at most; beyond, the oldest is ended as `payment.status=untracked`. */
const MAX_OPEN = 5_000;

interface Open {
  span: Span;
  ctx: Context;
  /** The phase under way (none before the first step is known to continue). */
  phase?: Span;
  status: PaymentStatus;
}

/** The phase a payment is in from `status` until its next step. */
function phaseName(status: PaymentStatus, next: PaymentStatus): string {
  switch (status) {
    case "quoted":
      return next === "reserved" ? "payment.reserve" : "payment.admission";
    case "reserved":
      return "payment.sign";
    case "signed":
      return "payment.submit";
    case "submitted":
      return "payment.settle";
    default:
      return `payment.${status}`;
  }
}

/** Whether a payment in this status has left flight (its span ends there). */
function leftFlight(status: PaymentStatus): boolean {
  return !PAYMENT_STATUS[status].inFlight;
}

/** The host of a service URL, or undefined when it is not one. */
export function payeeHost(service: string): string | undefined {
  try {
    return new URL(service).host;
  } catch {
    return undefined;
  }
}

function factsOf(event: Extract<PaymentEvent, { kind: "step" }>): Attributes {
  const p = event.payment;
  const host = payeeHost(p.service);
  return {
    "payment.id": p.paymentId,
    "payment.amount_usd": formatUsd(p.amount),
    "payment.asset": p.asset,
    "payment.network": p.network,
    ...(host ? { "payment.payee_host": host } : {}),
    caller: p.caller ?? "anonymous",
  };
}

export function paymentSpans(tracer: Tracer): PaymentEvents {
  const open = new Map<string, Open>();

  const end = (id: string, entry: Open, at: Date, status: PaymentStatus | "untracked") => {
    entry.phase?.end(at);
    entry.span.setAttribute("payment.status", status);
    if (status === "failed" || status === "refused" || status === "rejected")
      entry.span.setStatus({ code: SpanStatusCode.ERROR, message: status });
    entry.span.end(at);
    open.delete(id);
  };

  const begin = (event: Extract<PaymentEvent, { kind: "step" }>): Open => {
    const parent = context.active();
    const span = tracer.startSpan("payment", { startTime: event.at, attributes: factsOf(event) }, parent);
    if (open.size >= MAX_OPEN) {
      const [oldest] = open;
      if (oldest) end(oldest[0], oldest[1], event.at, "untracked");
    }
    return { span, ctx: trace.setSpan(parent, span), status: event.status };
  };

  const step = (event: Extract<PaymentEvent, { kind: "step" }>) => {
    const id = event.payment.paymentId;
    let entry = open.get(id);
    if (!entry) {
      entry = begin(event);
      open.set(id, entry);
      if (event.status !== "quoted") entry.span.setAttribute("payment.first_status", event.status);
    } else if (entry.phase) {
      // The phase is named by where it led (see phaseName).
      entry.phase.updateName(phaseName(entry.status, event.status));
      if (event.reason) entry.phase.setAttribute("payment.refusal_reason", event.reason);
      entry.phase.setAttribute("payment.to", event.status);
      entry.phase.end(event.at);
      entry.phase = undefined;
    }
    entry.status = event.status;
    if (event.reason) entry.span.setAttribute("payment.refusal_reason", event.reason);
    if (event.txHash) entry.span.setAttribute("payment.tx_hash", event.txHash);
    if (leftFlight(event.status)) end(id, entry, event.at, event.status);
    else entry.phase = tracer.startSpan("payment.phase", { startTime: event.at }, entry.ctx);
  };

  const instant = (name: string, at: Date, attributes: Attributes, error?: string) => {
    const span = tracer.startSpan(name, { startTime: at, attributes }, context.active());
    if (error) span.setStatus({ code: SpanStatusCode.ERROR, message: error });
    span.end(at);
  };

  return {
    emit(event) {
      switch (event.kind) {
        case "step":
          step(event);
          return;
        case "refused_early": {
          const host = event.service ? payeeHost(event.service) : undefined;
          instant(
            "payment.refused",
            event.at,
            {
              "payment.status": "refused",
              "payment.refusal_reason": event.reason,
              caller: event.caller ?? "anonymous",
              ...(host ? { "payment.payee_host": host } : {}),
            },
            "refused",
          );
          return;
        }
        case "reconciled":
          instant("payment.reconcile", event.at, {
            "payment.id": event.paymentId,
            "payment.status": event.to,
            "payment.from": event.from,
            ...(event.txHash ? { "payment.tx_hash": event.txHash } : {}),
          });
          return;
        case "approval_answered":
          instant("payment.approval_answered", event.at, {
            "payment.id": event.paymentId,
            "payment.approval": event.answer,
            "payment.approval_via": event.via,
          });
          return;
      }
    },
  };
}
