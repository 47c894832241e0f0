import { createHash } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import {
  type CallToolResult,
  CLIENT_CAPABILITIES_META_KEY,
  type ClientCapabilities,
  createRequestStateCodec,
  type InputRequiredResult,
  inputRequired,
  type RequestStateCodec,
  type ServerContext,
} from "@modelcontextprotocol/server";
import type { PayOutput } from "../tools/contract.js";
import { type ApprovalDeps, describeApproval, ended, endedResult, pendingResult } from "./approval.js";
import { refusalResult } from "./results.js";

/**
 * Approval on the 2026-07-28 revision (docs/mcp.md, "Approvals"): no server-sent requests, so a
 * `pay_quote` whose payment awaits the wallet returns an `InputRequiredResult` asking the client to
 * open the approval page (URL-mode elicitation), with the payment id in `requestState`, sealed with
 * HMAC-SHA256 and bound to the caller and wallet. The client retries the same call with that state;
 * a state that was altered, is expired or was minted for another caller is refused (-32602) before
 * the tool runs, and a valid one returns the payment's outcome, read from the ledger.
 */

/** What `requestState` carries: the payment the retried call reads. */
export interface ApprovalState {
  paymentId: string;
  /** Of the quote id the call was made with (its SHA-256, cut): the retry must name the same one. */
  quote?: string;
  /** The scope of the session that asked (sealed with it): a retry reads the answer's data as it. */
  scopeId?: string;
}

/** The key that opens an approval page request on the retried call. */
export const APPROVE_KEY = "approve";

/** How long a minted state holds: longer than any approval window. */
const STATE_TTL_SECONDS = 15 * 60;

/**
 * The codec of one caller's request states. `key`: at least 32 bytes, the same on every instance
 * (derived from QUOTE_SECRET; absent, random per process: then only this process accepts them).
 */
export function approvalStateCodec(key: Uint8Array, binding: string): RequestStateCodec<ApprovalState> {
  return createRequestStateCodec<ApprovalState>({
    key,
    ttlSeconds: STATE_TTL_SECONDS,
    bind: (ctx) => `${ctx.mcpReq.method}\0${binding}`,
  });
}

/** Whether the request's envelope declares URL-mode elicitation. */
export function declaresUrlElicitation(ctx: ServerContext): boolean {
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
  const capabilities = envelope?.[CLIENT_CAPABILITIES_META_KEY] as ClientCapabilities | undefined;
  return capabilities?.elicitation?.url !== undefined;
}

/** What a state keeps of the quote id its call named (the id itself is the client's to keep). */
export function quoteMark(quoteId: string): string {
  return createHash("sha256").update(quoteId).digest("base64url").slice(0, 22);
}

/** The first answer to a payment awaiting the wallet: open the page, then retry with this state. */
export async function askApproval(
  deps: ApprovalDeps,
  pay: PayOutput & { paymentId: string },
  ctx: ServerContext,
  codec: RequestStateCodec<ApprovalState>,
  quoteId: string,
): Promise<CallToolResult | InputRequiredResult> {
  const url = deps.approvalUrl(pay.paymentId);
  const view = await deps.face.getPayment(deps.caller, pay.paymentId, deps.scopeId);
  if (!declaresUrlElicitation(ctx)) return pendingResult(pay, url, view?.expiresAt ?? pay.approvalExpiresAt);
  const message = describeApproval(view, pay, deps.now());
  return inputRequired({
    inputRequests: { [APPROVE_KEY]: inputRequired.elicitUrl({ message, url }) },
    requestState: await codec.mint(
      {
        paymentId: pay.paymentId,
        quote: quoteMark(quoteId),
        ...(deps.scopeId ? { scopeId: deps.scopeId } : {}),
      },
      ctx,
    ),
  });
}

/**
 * The retried call (its state verified by the SDK with the codec): the payment's outcome once it
 * has ended, waiting for it (reading the ledger) until the approval's expiry or the call's end; a
 * client that declined gets the approval URL to show, as a client without elicitation does.
 */
export async function resumeApproval(
  deps: ApprovalDeps,
  state: ApprovalState,
  ctx: ServerContext,
  signal: AbortSignal,
  quoteId: string,
): Promise<CallToolResult> {
  // A state answers for the payment of the quote it was given with: another quote's call is refused,
  // not answered with that payment's outcome (the agent would take it for this quote's).
  if (state.quote !== undefined && state.quote !== quoteMark(quoteId))
    return refusalResult(
      "invalid_request",
      "This requestState belongs to another quote id: call again without it.",
    );
  let view = await deps.face.getPayment(deps.caller, state.paymentId, state.scopeId ?? deps.scopeId);
  if (!view) return refusalResult("not_found", "No payment of yours has this id.");
  const pending = {
    status: "awaiting_approval" as const,
    paymentId: state.paymentId,
    ...(view.serviceName ? { serviceName: view.serviceName } : {}),
  };
  const answer = ctx.mcpReq.inputResponses?.[APPROVE_KEY] as { action?: unknown } | undefined;
  const url = deps.approvalUrl(state.paymentId);
  if (answer?.action !== "accept" && !ended(view)) {
    return pendingResult(
      { ...pending, amountUsd: view.amount.usd, network: view.network },
      url,
      view.expiresAt,
    );
  }
  const expiry = view.expiresAt ? Date.parse(view.expiresAt) : deps.now().getTime();
  while (!ended(view) && !signal.aborted && deps.now().getTime() <= expiry + deps.pollMs) {
    await sleep(deps.pollMs, undefined, { signal }).catch(() => {});
    view = (await deps.face.getPayment(deps.caller, state.paymentId, state.scopeId ?? deps.scopeId)) ?? view;
  }
  if (ended(view)) return endedResult(view);
  return pendingResult(
    { ...pending, amountUsd: view.amount.usd, network: view.network },
    url,
    view.expiresAt,
  );
}
