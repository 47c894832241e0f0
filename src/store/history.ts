import { and, desc, eq, gte, inArray, lt, or, type SQL } from "drizzle-orm";
import type { HistoryQuery, PaymentHistory, PaymentRecord } from "../payments/ports/index.js";
import type { Db } from "./migrate.js";
import { payments } from "./schema.js";

/**
 * A caller's payments, or a wallet's, newest first (created_at, then payment id, both descending: a
 * stable order for keyset paging), on the index of migration 8 (caller, created_at, payment_id) or
 * of migration 1 (wallet, created_at).
 */
export class PgPaymentHistory implements PaymentHistory {
  constructor(private readonly db: Db) {}

  async listHistory(query: HistoryQuery): Promise<PaymentRecord[]> {
    const where: SQL[] = [
      query.wallet !== undefined ? eq(payments.wallet, query.wallet) : eq(payments.caller, query.caller),
    ];
    if (query.statuses && query.statuses.length > 0)
      where.push(inArray(payments.status, [...query.statuses]));
    if (query.since) where.push(gte(payments.createdAt, query.since));
    if (query.until) where.push(lt(payments.createdAt, query.until));
    if (query.after) {
      const { createdAt, paymentId } = query.after;
      const older = or(
        lt(payments.createdAt, createdAt),
        and(eq(payments.createdAt, createdAt), lt(payments.paymentId, paymentId)),
      );
      if (older) where.push(older);
    }
    const rows = await this.db
      .select()
      .from(payments)
      .where(and(...where))
      .orderBy(desc(payments.createdAt), desc(payments.paymentId))
      .limit(query.limit);
    return rows.map((row) => ({
      ...row,
      authorization: row.authorization ?? null,
      approval: row.approval ?? null,
    }));
  }
}
