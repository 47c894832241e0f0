import { z } from "zod/v4";
import { PAYMENT_STATUSES } from "./stream.js";

/**
 * `GET /api/payments/:id`: one payment as the ledger holds it now (docs/protocol.md, "Reading a
 * payment"). A turn that ended `payment-unclear` names the payment; this is where its final state
 * shows once the chain has been read. Plain JSON, never a signature.
 */
export const paymentStateSchema = z.looseObject({
  paymentId: z.string(),
  /** A ledger status: `settled`, `failed`, `unknown` (still being checked), `submitted`, ... */
  status: z.enum(PAYMENT_STATUSES),
  amount: z.object({
    /** Atomic units of the token, as a decimal string. */
    atomic: z.string().regex(/^[0-9]+$/),
    usd: z.string(),
    asset: z.string(),
  }),
  network: z.string(),
  payTo: z.string(),
  /** The paid service's URL. */
  service: z.string(),
  /** With `settled`: the transaction, and the payer when known. */
  transaction: z.string().optional(),
  payer: z.string().optional(),
  /** With `failed` (and the other ends that paid nothing): a stable snake_case reason. */
  reason: z.string().optional(),
  /** ISO-8601. */
  createdAt: z.string(),
  updatedAt: z.string(),
  settledAt: z.string().optional(),
  /** With `awaiting_approval`: until when the wallet can approve. */
  expiresAt: z.string().optional(),
});
export type PaymentState = z.infer<typeof paymentStateSchema>;

/** `GET /api/payments`: one row of the caller's history, with its explorer page when the network has one. */
export const paymentHistoryItemSchema = paymentStateSchema.extend({ explorerUrl: z.string().optional() });
export type PaymentHistoryItem = z.infer<typeof paymentHistoryItemSchema>;

/** `GET /api/payments`: a page of the caller's payments, newest first; `nextCursor` when more follow. */
export const paymentHistorySchema = z.object({
  items: z.array(paymentHistoryItemSchema),
  nextCursor: z.string().optional(),
});
export type PaymentHistoryPage = z.infer<typeof paymentHistorySchema>;
