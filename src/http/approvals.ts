import type { Context, Hono } from "hono";
import { parseWallet } from "../chains/index.js";
import { AppError } from "../errors/index.js";
import type { ApprovalView, PageAnswer, PageOutcome } from "../payments/index.js";
import { PAYMENT_ID, parsePageApproval } from "../protocol/index.js";
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
}

/** An answer is an id, a signature (at most 4096 bytes, hex) or a transaction: 16 KB is plenty. */
const MAX_ANSWER_BYTES = 16 * 1024;

async function getApproval(c: Context, deps: ApprovalRoutesDeps): Promise<Response> {
  const id = c.req.param("paymentId") ?? "";
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
