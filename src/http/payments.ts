import type { Context, Hono } from "hono";
import { AppError } from "../errors/index.js";
import type { Logger } from "../log/index.js";
import { formatUsd } from "../money/index.js";
import type { PaymentRecord } from "../payments/ports/index.js";
import { REASONS } from "../payments/rules/index.js";
import type { PaymentState } from "../protocol/index.js";
import { type Authenticate, authenticate } from "./chat.js";
import { problemResponse } from "./problem.js";

/**
 * Reading payments back (docs/protocol.md, "Reading a payment"). A turn whose payment ended
 * unclear names it (`payment_unclear`); the client reads its final state here once the chain has
 * been checked. A caller sees its own payments only: the bearer identity of the request that made
 * a payment (kept on its row, the binding approvals use) must be the one asking, and anything
 * else is the same 404 as an id that does not exist, so nothing says whether another's exists.
 */
export interface PaymentRoutesDeps extends Authenticate {
  /** The ledger's lookup by id. */
  get(paymentId: string): Promise<PaymentRecord | undefined>;
  logger: Logger;
}

/** Payment ids are `pay_` and a UUID; anything longer or stranger is not looked up. */
const PAYMENT_ID = /^pay_[0-9a-f-]{36}$/;

/** What a failed payment's row says as a stable reason: a pipeline reason, or the chain's verdict. */
function reasonOf(record: PaymentRecord): string | undefined {
  if (record.status !== "failed") return undefined;
  if (record.error && Object.hasOwn(REASONS, record.error)) return record.error;
  // The reconciler's only way to `failed`: the authorization (or blockhash) expired unused.
  return "expired_unused";
}

/** A ledger row as the client reads it: never the authorization, the approval terms or a signature. */
export function paymentState(record: PaymentRecord): PaymentState {
  const reason = reasonOf(record);
  return {
    paymentId: record.paymentId,
    status: record.status,
    amount: { atomic: record.amount.toString(), usd: formatUsd(record.amount), asset: record.asset },
    network: record.network,
    payTo: record.payTo,
    service: record.service,
    ...(record.txHash ? { transaction: record.txHash } : {}),
    ...(record.payer ? { payer: record.payer } : {}),
    ...(reason ? { reason } : {}),
    createdAt: record.createdAt.toISOString(),
    updatedAt: record.updatedAt.toISOString(),
    ...(record.settledAt ? { settledAt: record.settledAt.toISOString() } : {}),
    ...(record.status === "awaiting_approval" && record.expiresAt
      ? { expiresAt: record.expiresAt.toISOString() }
      : {}),
  };
}

async function getPayment(c: Context, deps: PaymentRoutesDeps): Promise<Response> {
  try {
    const { identity } = authenticate(c, deps);
    const id = c.req.param("id") ?? "";
    const notFound = new AppError("not_found", "No payment of yours has this id.");
    if (!PAYMENT_ID.test(id)) throw notFound;
    const record = await deps.get(id);
    if (!record || (record.caller ?? null) !== (identity ?? null)) throw notFound;
    return c.json(paymentState(record), 200, { "Cache-Control": "no-store" });
  } catch (error) {
    if (error instanceof AppError) return problemResponse(error);
    deps.logger.warn("payment lookup failed", { err: error });
    return problemResponse(new AppError("store_unavailable", "The payment ledger cannot be read now."));
  }
}

/** Mount the payment routes (`GET /api/payments/:id`; a listing can join it here). */
export function mountPaymentRoutes(app: Hono, deps: PaymentRoutesDeps): void {
  app.get("/api/payments/:id", (c) => getPayment(c, deps));
}
