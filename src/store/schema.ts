import { boolean, customType, integer, jsonb, pgTable, text, timestamp } from "drizzle-orm/pg-core";
import type { StatusEntry, TabEntry, TabStatus } from "../payments/ports/index.js";
import type { LedgerStatus } from "../payments/rules/index.js";

/**
 * Drizzle table definitions of the ledger. The tables are unqualified: the store sets the
 * connection's `search_path` to its schema, so one definition serves every schema (tests isolate
 * themselves in a schema of their own). The DDL lives in migrations/ and must match.
 */

/**
 * NUMERIC(78,0) mapped to bigint. Money never passes through a JS number: both drivers hand NUMERIC
 * over as text (a BIGINT column would come back from PGlite as a lossy number).
 */
export const atomicAmount = customType<{ data: bigint; driverData: string }>({
  dataType: () => "numeric(78,0)",
  toDriver: (value) => value.toString(),
  fromDriver: (value) => BigInt(value),
});

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: "date" });

/** One row per wallet that ever reserved: the row `reserve` locks to serialize a wallet's spending. */
export const walletBudgets = pgTable("wallet_budgets", {
  wallet: text("wallet").primaryKey(),
  createdAt: ts("created_at").notNull(),
});

export const payments = pgTable("payments", {
  paymentId: text("payment_id").primaryKey(),
  status: text("status").$type<LedgerStatus>().notNull(),
  history: jsonb("history").$type<StatusEntry[]>().notNull(),
  wallet: text("wallet").notNull(),
  scopeId: text("request_id").notNull(),
  service: text("service").notNull(),
  network: text("network").notNull(),
  asset: text("asset").notNull(),
  payTo: text("pay_to").notNull(),
  amount: atomicAmount("amount").notNull(),
  requirement: jsonb("requirement").$type<unknown>().notNull(),
  txHash: text("tx_hash"),
  payer: text("payer"),
  error: text("error"),
  authorization: jsonb("authorization_data").$type<unknown>(),
  createdAt: ts("created_at").notNull(),
  updatedAt: ts("updated_at").notNull(),
  settledAt: ts("settled_at"),
  approval: jsonb("approval").$type<unknown>(),
  caller: text("caller"),
  expiresAt: ts("expires_at"),
  /** Migration 13: the tab this payment was paid from, if any. */
  tabId: text("tab_id"),
});

/** Migration 13: tabs (src/payments/ports/tabs.ts). */
export const tabs = pgTable("tabs", {
  tabId: text("tab_id").primaryKey(),
  wallet: text("wallet").notNull(),
  network: text("network").notNull(),
  asset: text("asset").notNull(),
  session: text("session").notNull(),
  caller: text("caller"),
  tokenHash: text("token_hash").notNull(),
  servesCaller: boolean("serves_caller").notNull().default(false),
  amount: atomicAmount("amount").notNull(),
  status: text("status").$type<TabStatus>().notNull(),
  history: jsonb("history").$type<TabEntry[]>().notNull(),
  opening: jsonb("opening").$type<unknown>(),
  funding: jsonb("funding").$type<unknown>(),
  fundingTx: text("funding_tx"),
  refund: jsonb("refund").$type<unknown>(),
  refundTx: text("refund_tx"),
  refunded: atomicAmount("refunded"),
  error: text("error"),
  signBy: ts("sign_by").notNull(),
  endsAt: ts("ends_at").notNull(),
  createdAt: ts("created_at").notNull(),
  updatedAt: ts("updated_at").notNull(),
});

export const idempotencyKeys = pgTable("idempotency_keys", {
  key: text("key").primaryKey(),
  wallet: text("wallet"),
  fingerprint: text("fingerprint").notNull(),
  state: text("state").$type<"in-progress" | "complete">().notNull(),
  response: jsonb("response").$type<unknown>(),
  createdAt: ts("created_at").notNull(),
  expiresAt: ts("expires_at").notNull(),
  /** Migration 6: who holds an in-progress key, until when, and the request id of its attempt. */
  owner: text("owner"),
  leaseUntil: ts("lease_until"),
  requestId: text("request_id"),
});

export const schemaMigrations = pgTable("schema_migrations", {
  id: integer("id").primaryKey(),
  name: text("name").notNull(),
  appliedAt: ts("applied_at").notNull(),
});

/** Migration 9: what a payment approved on the approval page delivered, for its caller (24 h). */
export const deliveredData = pgTable("delivered_data", {
  paymentId: text("payment_id").primaryKey(),
  answerHash: text("answer_hash").notNull(),
  data: jsonb("data").$type<unknown>(),
  keptAt: ts("kept_at").notNull(),
});
