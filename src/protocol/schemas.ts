import * as z from "zod/v4-mini";
import { FINISH_REASONS } from "../errors/index.js";
import {
  type ApprovalRequest,
  type BudgetMeter,
  type ErrorPayload,
  type FinishPayload,
  PAYMENT_STATUSES,
  type PaymentSummary,
  type PaymentUpdate,
  type WalletRequest,
} from "./events.js";
import type { Exactly, ProtocolSchema, Same } from "./schema-type.js";

/**
 * The validators of the stream's payloads (types in events.ts), on zod's tree-shakable `zod/v4-mini`
 * so the client package carries only the parts it uses (docs/deploy.md, "Client package"). Each
 * is checked at compile time to output exactly its type, and exported as a `ProtocolSchema`.
 */

/** A decimal string of atomic units. */
const atomicUnits = () => z.string().check(z.regex(/^[0-9]+$/));

const money = z.object({ atomic: atomicUnits(), usd: z.string() });

const limitMeter = z.looseObject({
  limit: money,
  spent: money,
  pending: money,
  remaining: money,
  remainingAfter: z.optional(money),
});

const tabMeter = z.looseObject({ id: z.string(), amount: money, left: money, endsAt: z.string() });

const budgetMeter = z.looseObject({
  perTransaction: limitMeter,
  perRequest: limitMeter,
  daily: limitMeter,
  approvalAbove: z.optional(money),
  tab: z.optional(tabMeter),
});

const walletRequest = z.discriminatedUnion("kind", [
  z.looseObject({
    kind: z.literal("evm-typed-data"),
    method: z.literal("eth_signTypedData_v4"),
    typedData: z.looseObject({
      domain: z.record(z.string(), z.unknown()),
      types: z.record(z.string(), z.array(z.object({ name: z.string(), type: z.string() }))),
      primaryType: z.string(),
      message: z.record(z.string(), z.unknown()),
    }),
  }),
  z.looseObject({
    kind: z.literal("solana-transaction"),
    method: z.literal("signTransaction"),
    transaction: z.string(),
  }),
]);

const approvalRequest = z.looseObject({ wallet: z.string(), expiresAt: z.string(), sign: walletRequest });

const paymentUpdate = z.looseObject({
  paymentId: z.string(),
  status: z.enum(PAYMENT_STATUSES),
  service: z.looseObject({ url: z.string(), name: z.optional(z.string()) }),
  amount: z.optional(z.object({ atomic: atomicUnits(), usd: z.string(), asset: z.optional(z.string()) })),
  network: z.optional(z.string()),
  payTo: z.optional(z.string()),
  transaction: z.optional(z.string()),
  payer: z.optional(z.string()),
  message: z.optional(z.string()),
  reason: z.optional(z.string()),
  budget: z.optional(budgetMeter),
  approval: z.optional(approvalRequest),
  tab: z.optional(tabMeter),
});

const errorPayload = z.looseObject({ code: z.string(), message: z.string() });

const paymentSummary = z.looseObject({
  paymentId: z.string(),
  status: z.enum(PAYMENT_STATUSES),
  service: z.string(),
  amountUsd: z.optional(z.string()),
  network: z.optional(z.string()),
  transaction: z.optional(z.string()),
});

const finishPayload = z.looseObject({
  finishReason: z.enum(FINISH_REASONS),
  transactionHash: z.optional(z.string()),
  transactions: z.array(z.string()),
  payments: z.array(paymentSummary),
  usage: z.object({ inputTokens: z.number(), outputTokens: z.number(), totalTokens: z.number() }),
  model: z.string(),
  provider: z.string(),
  modelId: z.string(),
  approvals: z.optional(z.array(z.looseObject({ paymentId: z.string(), expiresAt: z.string() }))),
  errorCode: z.optional(z.string()),
});

/** The schema's output is exactly its type in events.ts (the build fails otherwise). */
type _SchemasMatchTypes = [
  Exactly<Same<z.output<typeof budgetMeter>, BudgetMeter>>,
  Exactly<Same<z.output<typeof walletRequest>, WalletRequest>>,
  Exactly<Same<z.output<typeof approvalRequest>, ApprovalRequest>>,
  Exactly<Same<z.output<typeof paymentUpdate>, PaymentUpdate>>,
  Exactly<Same<z.output<typeof errorPayload>, ErrorPayload>>,
  Exactly<Same<z.output<typeof paymentSummary>, PaymentSummary>>,
  Exactly<Same<z.output<typeof finishPayload>, FinishPayload>>,
];

export const textPayloadSchema: ProtocolSchema<string> = z.string();
export const budgetMeterSchema: ProtocolSchema<BudgetMeter> = budgetMeter;
export const walletRequestSchema: ProtocolSchema<WalletRequest> = walletRequest;
export const approvalRequestSchema: ProtocolSchema<ApprovalRequest> = approvalRequest;
export const paymentUpdateSchema: ProtocolSchema<PaymentUpdate> = paymentUpdate;
export const errorPayloadSchema: ProtocolSchema<ErrorPayload> = errorPayload;
export const paymentSummarySchema: ProtocolSchema<PaymentSummary> = paymentSummary;
export const finishPayloadSchema: ProtocolSchema<FinishPayload> = finishPayload;
