import {
  boundedData,
  DELIVERED_TTL_MS,
  type DeliveredData,
  type DeliveredEntry,
} from "../../payments/ports/index.js";

/** The most entries kept in memory; past it the oldest kept goes first. */
export const MEMORY_DELIVERED_MAX = 1000;

/**
 * What payments approved on the page delivered, in this process's memory: the contract of the
 * PostgreSQL one (24 h, bounded data), and at most `MEMORY_DELIVERED_MAX` entries.
 */
export class MemoryDeliveredData implements DeliveredData {
  private readonly entries = new Map<string, DeliveredEntry>();

  async keep(entry: DeliveredEntry): Promise<void> {
    const text = boundedData(entry.data);
    const previous = this.entries.get(entry.paymentId);
    this.entries.delete(entry.paymentId);
    this.entries.set(entry.paymentId, {
      paymentId: entry.paymentId,
      // As the SQL's upsert: the answer that first approved the payment stays its hash.
      answerHash: previous?.answerHash ?? entry.answerHash,
      ...(text !== undefined ? { data: JSON.parse(text) } : {}),
      keptAt: entry.keptAt,
    });
    for (const [id, kept] of this.entries) {
      if (
        this.entries.size <= MEMORY_DELIVERED_MAX &&
        kept.keptAt.getTime() > entry.keptAt.getTime() - DELIVERED_TTL_MS
      )
        break;
      this.entries.delete(id);
    }
  }

  async read(paymentId: string, now: Date): Promise<DeliveredEntry | undefined> {
    const entry = this.entries.get(paymentId);
    if (!entry || entry.keptAt.getTime() <= now.getTime() - DELIVERED_TTL_MS) return undefined;
    return structuredClone(entry);
  }
}
