import type { Context, Hono } from "hono";
import { parseWallet } from "../chains/index.js";
import { AppError } from "../errors/index.js";
import type { ApprovalView, PageAnswer, PageOutcome, TabDesk, TabOnPage } from "../payments/index.js";
import {
  type LedgerStatus,
  networkLabel,
  PAYMENT_ID,
  parsePageApproval,
  parsePageFund,
  TAB_ID,
} from "../protocol/index.js";
import type { RateLimiter } from "../ratelimit/rate-limit.js";
import { readJsonBody } from "./body.js";
import { nodeRequest } from "./chat-request.js";
import type { Lifecycle } from "./lifecycle.js";
import { rateLimitIp } from "./rate-limit.js";

/**
 * The approval page's endpoints (docs/protocol.md, "The approval page"): what the page shows of a
 * payment that waits for a wallet, and the wallet's answer from the page. No bearer identity: the
 * answer is bound to no caller, and only the payment's own wallet's signature over its stored
 * terms settles it (src/payments/face/page-approval.ts); the URL alone pays nothing. Rate-limited by
 * the client's IP, CORS as the other API routes.
 */
export interface ApprovalRoutesDeps {
  view(paymentId: string): Promise<ApprovalView | undefined>;
  answer(input: PageAnswer): Promise<PageOutcome>;
  /** Tabs that serve their caller (MCP's `open_tab`): their funding is approved on the same page. */
  tabs?: Pick<TabDesk, "onPage" | "fundOnPage">;
}

/** Ledger words for a tab's state, so the page reads it as it reads a payment. */
const TAB_AS_LEDGER: Record<string, LedgerStatus> = {
  awaiting_signature: "awaiting_approval",
  funding: "submitted",
  open: "settled",
  closing: "settled",
  closed: "settled",
  expired: "expired",
  failed: "failed",
};

/** A tab's funding as the approval page shows a payment: the same card, the same checks. */
function tabApprovalView(page: TabOnPage): ApprovalView {
  const { tab } = page;
  const waiting = tab.status === "awaiting_signature" && Date.parse(page.signBy) > Date.now();
  return {
    paymentId: tab.tabId,
    status: waiting ? "awaiting_approval" : (TAB_AS_LEDGER[tab.status] ?? "failed"),
    amount: { ...tab.amount, asset: "" },
    token: "USDC",
    network: tab.network,
    networkName: networkLabel(tab.network),
    payTo: tab.session,
    service: { url: page.service, name: "a tab for your agent" },
    wallet: tab.wallet,
    expiresAt: page.signBy,
    ...(waiting ? { approval: { wallet: tab.wallet, expiresAt: page.signBy, sign: page.sign } } : {}),
    tab: { words: page.words, endsAt: tab.endsAt, status: tab.status },
  };
}

/** An answer is an id, a signature (at most 4096 bytes, hex) or a transaction: 16 KB is plenty. */
const MAX_ANSWER_BYTES = 16 * 1024;

async function getApproval(c: Context, deps: ApprovalRoutesDeps): Promise<Response> {
  const id = c.req.param("paymentId") ?? "";
  if (TAB_ID.test(id)) {
    const page = await deps.tabs?.onPage(id);
    if (!page) throw new AppError("not_found", "No tab with this id waits for a wallet's approval.");
    const view = tabApprovalView(page);
    return c.json(view, 200, { "Cache-Control": "no-store" });
  }
  const view = PAYMENT_ID.test(id) ? await deps.view(id) : undefined;
  if (!view) throw new AppError("not_found", "No payment with this id waits for a wallet's approval.");
  return c.json(view, 200, { "Cache-Control": "no-store" });
}

type RouteDeps = ApprovalRoutesDeps & {
  rateLimiter: RateLimiter;
  clientIp: (c: Context) => string;
  lifecycle: Pick<Lifecycle, "keep">;
};

async function postApproval(c: Context, deps: RouteDeps): Promise<Response> {
  const id = c.req.param("paymentId") ?? "";
  const body = await readJsonBody(c.req.raw, MAX_ANSWER_BYTES, nodeRequest(c));
  if (TAB_ID.test(id) && deps.tabs) {
    const funding = deps.tabs.fundOnPage(id, parsePageFund(body));
    deps.lifecycle.keep(funding);
    const tab = await funding;
    return c.json(
      {
        status: tab.status,
        amount: tab.amount,
        ...(tab.fundingTx ? { transaction: tab.fundingTx } : {}),
        ...(tab.error ? { error: { code: "tab_failed", message: tab.error } } : {}),
      },
      200,
      { "Cache-Control": "no-store" },
    );
  }
  if (!PAYMENT_ID.test(id))
    throw new AppError("approval_not_found", "No payment with this id awaits approval.");
  const { answer, wallet, declineSignature } = parsePageApproval(id, body, parseWallet);
  const answering = deps.answer({
    answer,
    ...(wallet ? { wallet } : {}),
    ...(declineSignature ? { declineSignature } : {}),
    signal: c.req.raw.signal,
  });
  // A shutdown (or a serverless function's end) waits for the payment to be recorded.
  deps.lifecycle.keep(answering);
  const outcome = await answering;
  const { replayed, ...rest } = outcome;
  return c.json(rest, 200, {
    "Cache-Control": "no-store",
    ...(replayed ? { "Idempotent-Replayed": "true" } : {}),
  });
}

/** Mount `GET` and `POST /api/approvals/:paymentId`; refusals are AppErrors (the app's problem+json). */
export function mountApprovalRoutes(app: Hono, deps: RouteDeps): void {
  const limit = rateLimitIp({ rateLimiter: deps.rateLimiter, clientIp: deps.clientIp });
  app.get("/api/approvals/:paymentId", limit, (c) => getApproval(c, deps));
  app.post("/api/approvals/:paymentId", limit, (c) => postApproval(c, deps));
}
