/**
 * What a payment approved on the approval page delivered, kept for the payment's own caller: the
 * page has no bearer identity and is never shown the service's answer, so the caller reads it
 * later (GET /api/payments/:id, the payments face's `getPayment`). src/store implements it on
 * PostgreSQL/PGlite and in memory. Entries live `DELIVERED_TTL_MS` (24 h) and are bounded in size.
 */

/** How long a kept answer may be read after it was kept. */
export const DELIVERED_TTL_MS = 24 * 60 * 60 * 1000;
/** The largest kept answer, as JSON text (the service data is already bounded before this). */
export const DELIVERED_MAX_CHARS = 16_384;

export interface DeliveredEntry {
  paymentId: string;
  /**
   * A hash of the wallet's answer that approved the payment (never the answer itself): the same
   * answer sent again replays the outcome instead of being refused as used.
   */
  answerHash: string;
  /** The service's answer as the caller reads it (plain JSON, untrusted, bounded); absent until delivered. */
  data?: unknown;
  keptAt: Date;
}

export interface DeliveredData {
  /** Keep (or replace) a payment's entry. Entries older than the TTL may be dropped now. */
  keep(entry: DeliveredEntry): Promise<void>;
  /** A payment's entry, unless it is older than the TTL at `now`. */
  read(paymentId: string, now: Date): Promise<DeliveredEntry | undefined>;
}

/** The entry's data as JSON text within `DELIVERED_MAX_CHARS`, or undefined when there is none. */
export function boundedData(data: unknown): string | undefined {
  if (data === undefined) return undefined;
  const text = JSON.stringify(data);
  if (text.length <= DELIVERED_MAX_CHARS) return text;
  return JSON.stringify({ untrusted: true, truncated: true, body: null, contentType: "application/json" });
}
