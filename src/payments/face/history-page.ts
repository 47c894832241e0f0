import { isStorableInstant } from "../../protocol/clock.js";
import { PAYMENT_ID } from "../../protocol/index.js";
import { type HistoryOwner, type HistoryQuery, ownsPayment, type PaymentRecord } from "../ports/index.js";

/**
 * One page of a caller's payment history, and the cursor to the next (docs/protocol.md, "Listing
 * payments"). One definition for every way in: GET /api/payments and the face's `listPayments`
 * (MCP's `list_payments`). The cursor is the last row's (createdAt, paymentId), opaque to clients;
 * it names a position only, never whose payments (the caller's identity, or the signed-in wallet,
 * decides that).
 */

/** The largest page the face lists (GET /api/payments's JSON bound). */
export const HISTORY_PAGE_MAX = 100;

/** The largest page of an export (GET /api/payments as CSV: `forExport`). */
export const HISTORY_EXPORT_MAX = 1000;

/** A cursor is short: anything longer is not one this service gave, and is not decoded. */
export const CURSOR_MAX_CHARS = 200;

export function encodeCursor(record: Pick<PaymentRecord, "createdAt" | "paymentId">): string {
  return Buffer.from(`${record.createdAt.toISOString()}|${record.paymentId}`).toString("base64url");
}

/** The position a cursor names; undefined when it is not a cursor this service gave. */
export function decodeCursor(value: string): HistoryQuery["after"] | undefined {
  if (value.length > CURSOR_MAX_CHARS || !/^[A-Za-z0-9_-]+$/.test(value)) return undefined;
  const [at, paymentId, ...rest] = Buffer.from(value, "base64url").toString("utf8").split("|");
  const createdAt = new Date(at ?? "");
  if (rest.length > 0 || !paymentId || !PAYMENT_ID.test(paymentId) || !isStorableInstant(createdAt))
    return undefined;
  return { createdAt, paymentId };
}

/**
 * A page from rows read with `limit + 1` (one more than shown says whether there is a next page):
 * the owner's own rows only (the caller's, or the signed-in wallet's), and the cursor after the
 * last one shown when more follow.
 */
export function historyPage(
  records: readonly PaymentRecord[],
  limit: number,
  owner: HistoryOwner,
): { page: PaymentRecord[]; nextCursor?: string } {
  const page = records.slice(0, limit).filter((r) => ownsPayment(owner, r));
  const last = page.at(-1);
  return records.length > limit && last ? { page, nextCursor: encodeCursor(last) } : { page };
}

/**
 * Whether one payment is the reader's to read (GET /api/payments/:id): a signed-in wallet's are
 * those paid from it; a caller's (an anonymous one's too) those it asked for.
 */
export function mayRead(
  reader: string | undefined | { wallet: string },
  row: Pick<PaymentRecord, "caller" | "wallet">,
): boolean {
  return typeof reader === "object"
    ? row.wallet === reader.wallet
    : (row.caller ?? null) === (reader ?? null);
}
