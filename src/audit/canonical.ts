import { createHash } from "node:crypto";

/**
 * The one canonical form the chain hashes (docs/audit.md#the-chain): JSON of the record's columns
 * (`at` as ISO-8601 in UTC to the millisecond, kind, caller, requestId, paymentId, data) with every
 * object's keys sorted, no whitespace. Data is normalised before it is stored (bigint -> decimal
 * string, Date -> ISO string, undefined dropped, non-finite numbers -> null, strings made
 * well-formed and stripped of NUL, which jsonb refuses), so what PostgreSQL hands back parses to
 * the same value and gives the same text: verify recomputes every hash from the stored columns.
 */

/** The previous hash of the first record. */
export const GENESIS = "0".repeat(64);

const clean = (text: string): string => text.toWellFormed().replaceAll("\u0000", "");

/** A value as it is stored: plain JSON. */
export function normalise(value: unknown): unknown {
  if (value === null) return null;
  switch (typeof value) {
    case "string":
      return clean(value);
    case "bigint":
      return value.toString();
    case "number":
      return Number.isFinite(value) ? value : null;
    case "boolean":
      return value;
    case "object":
      if (value instanceof Date) return value.toISOString();
      if (Array.isArray(value)) return value.map((v) => (v === undefined ? null : normalise(v)));
      return Object.fromEntries(
        Object.entries(value as Record<string, unknown>)
          .filter(([, v]) => v !== undefined && typeof v !== "function" && typeof v !== "symbol")
          .map(([k, v]) => [clean(k), normalise(v)]),
      );
    default:
      return null;
  }
}

/** JSON with every object's keys sorted (by UTF-16 code units, as the default sort does). */
export function sortedJson(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(sortedJson).join(",")}]`;
  const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) =>
    a < b ? -1 : a > b ? 1 : 0,
  );
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${sortedJson(v)}`).join(",")}}`;
}

/** The columns a record's canonical text is made of. */
export interface CanonicalFields {
  at: Date;
  kind: string;
  caller: string | null;
  requestId: string | null;
  paymentId: string | null;
  data: Record<string, unknown>;
}

export function canonicalOf(record: CanonicalFields): string {
  return sortedJson({
    at: record.at.toISOString(),
    kind: record.kind,
    caller: record.caller,
    requestId: record.requestId,
    paymentId: record.paymentId,
    data: record.data,
  });
}

/** sha256(prevHash || canonical), hex: what `audit_append` computes in SQL, over UTF-8. */
export function chainHash(prevHash: string, canonical: string): string {
  return createHash("sha256")
    .update(prevHash + canonical, "utf8")
    .digest("hex");
}
