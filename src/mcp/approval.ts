import { setTimeout as sleep } from "node:timers/promises";
import type { CallToolResult, Notification, RequestId, ServerContext } from "@modelcontextprotocol/server";
import type { PaymentsFace, PaymentView } from "../payments/face.js";
import { networkLabel, PAYMENT_STATUS } from "../protocol/index.js";
import type { PayOutput } from "../tools/contract.js";
import { okResult, refusalResult, UNTRUSTED_NOTE } from "./results.js";

/**
 * A payment that waits for the user's wallet (docs/mcp.md, "Approvals"). A client that declared
 * URL-mode elicitation is asked to open this service's approval page, and the tool call waits
 * (bounded by the approval's expiry and the call's signal) until the ledger shows the payment
 * ended; any other client gets the page's address as a normal result, to show the user, and reads
 * the outcome later with `get_payment`. Nothing here approves anything: only the wallet's own
 * signature on the page does (the face checks it).
 */
export interface ApprovalDeps {
  face: Pick<PaymentsFace, "getPayment">;
  caller: string | undefined;
  /** The session's scope: with no caller, what shows the payment is this session's (its answer's data). */
  scopeId?: string;
  approvalUrl: (paymentId: string) => string;
  urlElicitation: boolean;
  now: () => Date;
  /** How often the ledger is read while waiting; default 1 s. */
  pollMs: number;
  /** The session's elicitation answers that arrive on other requests (stateless HTTP). */
  answers?: { listen(listener: (action: string) => void): () => void };
  /**
   * Sends a notification on the call's own stream. Over stateless HTTP the server instance of a
   * POST never saw the client's `initialize`, so the SDK would refuse `elicitation/complete`: the
   * HTTP layer, which knows from the session id that the client declared URL elicitation, sends it
   * through its transport. Absent: the SDK's own (stdio, in-process).
   */
  notify?: (notification: Notification, requestId: RequestId) => Promise<void>;
  /** For the operator's log: a notification that could not be sent. */
  onError?: (error: unknown) => void;
}

type Extra = ServerContext;

/**
 * "$0.05 to 0xabc… for Weather now (https://api.example/weather) on eip155:84532, until 10:42:00
 * UTC (in 5 minutes)".
 */
export function describeApproval(view: PaymentView | undefined, pay: PayOutput, now: Date): string {
  // Only the USDC assets the service is configured with are ever paid (an address says nothing).
  const amount = `$${view?.amount.usd ?? pay.amountUsd ?? "?"} (USDC)`;
  const payee = view?.payTo ? ` to ${view.payTo}` : "";
  // A name is discovery's text, so the URL paid goes beside it: a name alone could say anything.
  const url = view?.service ?? pay.service;
  const name = pay.serviceName ?? view?.serviceName;
  const service = name && url ? `${name} (${url})` : (name ?? url ?? "the service");
  const id = view?.network ?? pay.network;
  const network = id ? networkLabel(id) : "its network";
  const expiresAt = view?.expiresAt ?? pay.approvalExpiresAt;
  let until = "";
  if (expiresAt) {
    const at = new Date(expiresAt);
    const minutes = Math.max(0, Math.round((at.getTime() - now.getTime()) / 60_000));
    until = `, until ${at.toISOString().slice(11, 19)} UTC (in ${minutes} minute${minutes === 1 ? "" : "s"})`;
  }
  return `Approve in your wallet: pay ${amount}${payee} for ${service} on ${network}${until}. Nothing is paid unless your wallet signs.`;
}

/** Whether the payment has left the approval and nothing in it still moves. */
export function ended(view: PaymentView): boolean {
  return view.status !== "awaiting_approval" && !PAYMENT_STATUS[view.status].inFlight;
}

/** The ledger's word on a payment that was approved, declined or left to expire. */
export function endedResult(view: PaymentView): CallToolResult {
  const value = { ...view } as Record<string, unknown>;
  switch (view.status) {
    case "settled":
      return okResult(`Paid; the service's answer is in \`data\` when kept. ${UNTRUSTED_NOTE}`, value);
    case "rejected":
      return okResult("The user declined in the wallet; nothing was paid.", value);
    case "expired":
      return refusalResult("approval_expired", "The approval window passed; nothing was paid.", value);
    case "unknown":
      return okResult(
        "Sent; its outcome is being checked on chain. Do not pay again: ask get_payment.",
        value,
      );
    default:
      return refusalResult("payment_failed", `The payment ended ${view.status}; nothing was paid.`, value);
  }
}

export function pendingResult(pay: PayOutput, url: string, expiresAt: string | undefined): CallToolResult {
  return okResult(
    "The user's wallet must approve this payment. Show the user the approvalUrl (they sign there, in their own wallet), then call get_payment with the paymentId to learn the outcome. Nothing is paid until then.",
    {
      status: "awaiting_approval",
      approvalUrl: url,
      ...(expiresAt ? { expiresAt } : {}),
      paymentId: pay.paymentId,
      ...(pay.amountUsd ? { amountUsd: pay.amountUsd } : {}),
      ...(pay.network ? { network: pay.network } : {}),
      ...(pay.serviceName ? { serviceName: pay.serviceName } : {}),
    },
  );
}

/** Asks the client to open the page; resolves when it answers (or never, on a transport that lost it). */
function elicit(
  extra: Extra,
  message: string,
  url: string,
  paymentId: string,
  timeout: number,
  signal: AbortSignal,
) {
  return extra.mcpReq
    .send(
      { method: "elicitation/create", params: { mode: "url", message, url, elicitationId: paymentId } },
      { timeout, signal },
    )
    .then(
      (result) => result.action,
      () => "unanswered" as const,
    );
}

/** The result of a `pay_quote` that came back `awaiting_approval`. */
export async function awaitApproval(
  deps: ApprovalDeps,
  pay: PayOutput & { paymentId: string },
  extra: Extra,
  signal: AbortSignal,
): Promise<CallToolResult> {
  const url = deps.approvalUrl(pay.paymentId);
  const first = await deps.face.getPayment(deps.caller, pay.paymentId, deps.scopeId);
  const expiresAt = first?.expiresAt ?? pay.approvalExpiresAt;
  if (!deps.urlElicitation) return pendingResult(pay, url, expiresAt);

  const expiry = expiresAt ? Date.parse(expiresAt) : deps.now().getTime();
  const message = describeApproval(first, pay, deps.now());
  let declined = false;
  // Ended with the call: an answer that never comes (stateless HTTP) leaves no timer behind.
  const asking = new AbortController();
  const timeout = Math.max(1, expiry - deps.now().getTime());
  const hear = (action: string) => {
    if (action === "decline" || action === "cancel") declined = true;
  };
  void elicit(extra, message, url, pay.paymentId, timeout, AbortSignal.any([signal, asking.signal])).then(
    hear,
  );
  const stopListening = deps.answers?.listen(hear);
  try {
    return await waitForEnd(deps, pay, extra, signal, () => declined, first, expiry);
  } finally {
    stopListening?.();
    asking.abort();
  }
}

/** Reads the ledger until the payment ended, the client declined, the approval expired or the call ended. */
export async function waitForEnd(
  deps: ApprovalDeps,
  pay: PayOutput & { paymentId: string },
  extra: Extra,
  signal: AbortSignal,
  declined: () => boolean,
  first: PaymentView | undefined,
  expiry: number,
): Promise<CallToolResult> {
  // One read after the approval's expiry too: the reconciler moves it to `expired`.
  let view = first;
  while (!signal.aborted && !declined()) {
    if (view && ended(view)) {
      const complete = {
        method: "notifications/elicitation/complete",
        params: { elicitationId: pay.paymentId },
      };
      await (deps.notify ? deps.notify(complete, extra.mcpReq.id) : extra.mcpReq.notify(complete)).catch(
        (error: unknown) => deps.onError?.(error),
      );
      return endedResult(view);
    }
    if (deps.now().getTime() > expiry + deps.pollMs) break;
    await sleep(deps.pollMs, undefined, { signal }).catch(() => {});
    view = await deps.face.getPayment(deps.caller, pay.paymentId, deps.scopeId);
  }
  return pendingResult(pay, deps.approvalUrl(pay.paymentId), view?.expiresAt ?? pay.approvalExpiresAt);
}
