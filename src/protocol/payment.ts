import * as z from "zod/v4-mini";
import { PAYMENT_STATUSES, type PaymentStatus } from "./events.js";
import type { Exactly, ProtocolSchema, Same } from "./schema-type.js";

/**
 * `GET /api/payments/:id`: one payment as the ledger holds it now (docs/protocol.md, "Reading a
 * payment"). A turn that ended `payment-unclear` names the payment; this is where its final state
 * shows once the chain has been read. Plain JSON, never a signature. Its type, then its schema
 * (on `zod/v4-mini`, checked at compile time to output exactly the type, as in schemas.ts).
 */
export interface PaymentState {
  [key: string]: unknown;
  paymentId: string;
  /** A ledger status: `settled`, `failed`, `unknown` (still being checked), `submitted`, ... */
  status: PaymentStatus;
  amount: {
    /** Atomic units of the token, as a decimal string. */
    atomic: string;
    usd: string;
    asset: string;
  };
  network: string;
  payTo: string;
  /** The paid service's URL. */
  service: string;
  /** With `settled`: the transaction, and the payer when known. */
  transaction?: string;
  payer?: string;
  /** With `failed` (and the other ends that paid nothing): a stable snake_case reason. */
  reason?: string;
  /** ISO-8601. */
  createdAt: string;
  updatedAt: string;
  settledAt?: string;
  /** With `awaiting_approval`: until when the wallet can approve. */
  expiresAt?: string;
}

/** `GET /api/payments`: one row of the caller's history, with its explorer page when the network has one. */
export interface PaymentHistoryItem extends PaymentState {
  /** The service's name as discovery listed it, when the payment's approval recorded one (display only). */
  serviceName?: string;
  explorerUrl?: string;
}

/** `GET /api/payments`: a page of the caller's payments, newest first; `nextCursor` when more follow. */
export interface PaymentHistoryPage {
  items: PaymentHistoryItem[];
  nextCursor?: string;
}

const paymentStateShape = {
  paymentId: z.string(),
  status: z.enum(PAYMENT_STATUSES),
  amount: z.object({ atomic: z.string().check(z.regex(/^[0-9]+$/)), usd: z.string(), asset: z.string() }),
  network: z.string(),
  payTo: z.string(),
  service: z.string(),
  transaction: z.optional(z.string()),
  payer: z.optional(z.string()),
  reason: z.optional(z.string()),
  createdAt: z.string(),
  updatedAt: z.string(),
  settledAt: z.optional(z.string()),
  expiresAt: z.optional(z.string()),
};
const paymentState = z.looseObject(paymentStateShape);
const paymentHistoryItem = z.looseObject({
  ...paymentStateShape,
  serviceName: z.optional(z.string()),
  explorerUrl: z.optional(z.string()),
});
const paymentHistory = z.object({ items: z.array(paymentHistoryItem), nextCursor: z.optional(z.string()) });

type _SchemasMatchTypes = [
  Exactly<Same<z.output<typeof paymentState>, PaymentState>>,
  Exactly<Same<z.output<typeof paymentHistoryItem>, PaymentHistoryItem>>,
  Exactly<Same<z.output<typeof paymentHistory>, PaymentHistoryPage>>,
];

export const paymentStateSchema: ProtocolSchema<PaymentState> = paymentState;
export const paymentHistoryItemSchema: ProtocolSchema<PaymentHistoryItem> = paymentHistoryItem;
export const paymentHistorySchema: ProtocolSchema<PaymentHistoryPage> = paymentHistory;
