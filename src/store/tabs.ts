import { and, desc, eq, inArray, isNull, lt, type SQL, sql } from "drizzle-orm";
import {
  type NewTab,
  TAB_MOVES,
  type TabEntry,
  type TabMoveFields,
  type TabRecord,
  type TabStatus,
  type TabStore,
} from "../payments/ports/index.js";
import type { Db } from "./migrate.js";
import { payments, tabs } from "./schema.js";
import { jsonb, storableText } from "./storable.js";

/** Statuses whose amount counts against a tab (migration 13's `tab_committed`). */
const COMMITTED = ["reserved", "signed", "submitted", "settled", "unknown"] as const;
/** Payments of a tab that are not final yet: the tab waits for them before it returns the rest. */
const IN_FLIGHT = ["reserved", "signed", "submitted", "unknown"] as const;

/** Tabs on PostgreSQL (migration 13): every move is one conditional UPDATE. */
/** At most this many ended tabs are read per sweep, oldest first: many cannot slow the live ones. */
const UNCHECKED_PER_SWEEP = 20;

export class PgTabStore implements TabStore {
  constructor(private readonly db: Db) {}

  async create(tab: NewTab): Promise<TabRecord> {
    const at = tab.createdAt;
    const [row] = await this.db
      .insert(tabs)
      .values({
        ...tab,
        status: "awaiting_signature",
        history: [{ status: "awaiting_signature", at: at.toISOString() }],
        updatedAt: at,
      })
      .returning();
    if (!row) throw new Error("tabs: no row returned");
    return row;
  }

  async get(tabId: string): Promise<TabRecord | undefined> {
    const [row] = await this.db.select().from(tabs).where(eq(tabs.tabId, tabId));
    return row;
  }

  async move(tabId: string, from: TabStatus, to: TabStatus, fields: TabMoveFields, now: Date) {
    if (!TAB_MOVES[from].includes(to)) throw new Error(`a tab cannot move from ${from} to ${to}`);
    const entry: TabEntry = { status: to, at: now.toISOString() };
    const tx = fields.fundingTx ?? fields.refundTx;
    if (tx) entry.txHash = tx;
    if (fields.error) entry.error = fields.error;
    const rows = await this.db
      .update(tabs)
      .set({
        status: to,
        history: sql`${tabs.history} || ${jsonb([entry])}::jsonb`,
        updatedAt: now,
        ...(fields.funding !== undefined ? { funding: fields.funding } : {}),
        ...(fields.fundingTx !== undefined ? { fundingTx: fields.fundingTx } : {}),
        ...(fields.refundTx !== undefined ? { refundTx: fields.refundTx } : {}),
        ...(fields.refunded !== undefined ? { refunded: fields.refunded } : {}),
        ...(fields.error !== undefined ? { error: storableText(fields.error) } : {}),
      })
      .where(and(eq(tabs.tabId, tabId), eq(tabs.status, from)))
      .returning({ tabId: tabs.tabId });
    return rows.length === 1;
  }

  setRefund(tabId: string, refund: unknown, now: Date) {
    return this.putRefund(tabId, refund, sql`${tabs.refund} IS NULL`, now);
  }

  clearRefund(tabId: string, refund: unknown, now: Date) {
    return this.putRefund(tabId, null, sql`${tabs.refund} = ${jsonb(refund)}::jsonb`, now);
  }

  /** The refund written only while the tab is `closing` and `held` holds of the one recorded. */
  private async putRefund(tabId: string, refund: unknown, held: SQL, now: Date) {
    const rows = await this.db
      .update(tabs)
      .set({ refund, updatedAt: now })
      .where(and(eq(tabs.tabId, tabId), eq(tabs.status, "closing"), held))
      .returning({ tabId: tabs.tabId });
    return rows.length === 1;
  }

  listByStatus(statuses: readonly TabStatus[]): Promise<TabRecord[]> {
    if (statuses.length === 0) return Promise.resolve([]);
    return this.db
      .select()
      .from(tabs)
      .where(inArray(tabs.status, [...statuses]))
      .orderBy(tabs.createdAt);
  }

  listUnchecked(signedBefore: Date): Promise<TabRecord[]> {
    return this.db
      .select()
      .from(tabs)
      .where(
        and(
          inArray(tabs.status, ["expired", "failed"]),
          isNull(tabs.refunded),
          lt(tabs.signBy, signedBefore),
        ),
      )
      .orderBy(tabs.updatedAt)
      .limit(UNCHECKED_PER_SWEEP);
  }

  async deferCheck(tabId: string, status: "expired" | "failed", now: Date): Promise<boolean> {
    const rows = await this.db
      .update(tabs)
      .set({ updatedAt: now })
      .where(and(eq(tabs.tabId, tabId), eq(tabs.status, status), isNull(tabs.refunded)))
      .returning({ tabId: tabs.tabId });
    return rows.length === 1;
  }

  async markEmpty(tabId: string, status: "expired" | "failed", now: Date): Promise<boolean> {
    const rows = await this.db
      .update(tabs)
      .set({ refunded: 0n, updatedAt: now })
      .where(and(eq(tabs.tabId, tabId), eq(tabs.status, status), isNull(tabs.refunded)))
      .returning({ tabId: tabs.tabId });
    return rows.length === 1;
  }

  listByWallet(wallet: string, limit: number): Promise<TabRecord[]> {
    return this.db
      .select()
      .from(tabs)
      .where(eq(tabs.wallet, wallet))
      .orderBy(desc(tabs.createdAt))
      .limit(limit);
  }

  findServing(caller: string, wallet: string): Promise<TabRecord[]> {
    return this.db
      .select()
      .from(tabs)
      .where(
        and(
          eq(tabs.servesCaller, true),
          eq(tabs.status, "open"),
          eq(tabs.caller, caller),
          eq(tabs.wallet, wallet),
        ),
      )
      .orderBy(desc(tabs.createdAt))
      .limit(20);
  }

  async usage(tabId: string) {
    const rows = await this.db
      .select({ status: payments.status, amount: payments.amount })
      .from(payments)
      .where(eq(payments.tabId, tabId));
    let committed = 0n;
    let settled = 0n;
    let inFlight = 0;
    for (const row of rows) {
      if ((COMMITTED as readonly string[]).includes(row.status)) committed += row.amount;
      if (row.status === "settled") settled += row.amount;
      if ((IN_FLIGHT as readonly string[]).includes(row.status)) inFlight += 1;
    }
    return { committed, settled, inFlight };
  }
}
