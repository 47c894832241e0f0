import { and, eq, gt, lt } from "drizzle-orm";
import {
  boundedData,
  DELIVERED_TTL_MS,
  type DeliveredData,
  type DeliveredEntry,
} from "../payments/ports/index.js";
import type { Db } from "./migrate.js";
import { deliveredData } from "./schema.js";

/**
 * What payments approved on the approval page delivered (the port is src/payments/ports/delivered.ts),
 * on the ledger's PostgreSQL, one row per payment (migration 9). Rows older than 24 h are never
 * read, and each write deletes them.
 */
export class PgDeliveredData implements DeliveredData {
  constructor(private readonly db: Db) {}

  async keep(entry: DeliveredEntry): Promise<void> {
    const text = boundedData(entry.data);
    const row = {
      paymentId: entry.paymentId,
      answerHash: entry.answerHash,
      data: text === undefined ? null : JSON.parse(text),
      keptAt: entry.keptAt,
    };
    await this.db
      .delete(deliveredData)
      .where(lt(deliveredData.keptAt, new Date(entry.keptAt.getTime() - DELIVERED_TTL_MS)));
    await this.db
      .insert(deliveredData)
      .values(row)
      .onConflictDoUpdate({ target: deliveredData.paymentId, set: { data: row.data, keptAt: row.keptAt } });
  }

  async read(paymentId: string, now: Date): Promise<DeliveredEntry | undefined> {
    const [row] = await this.db
      .select()
      .from(deliveredData)
      .where(
        and(
          eq(deliveredData.paymentId, paymentId),
          gt(deliveredData.keptAt, new Date(now.getTime() - DELIVERED_TTL_MS)),
        ),
      );
    if (!row) return undefined;
    return {
      paymentId: row.paymentId,
      answerHash: row.answerHash,
      ...(row.data !== null && row.data !== undefined ? { data: row.data } : {}),
      keptAt: row.keptAt,
    };
  }
}
