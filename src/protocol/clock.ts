/**
 * An instant as a sentence for people gives it, whoever reads it and wherever: the time of day in
 * UTC ("09:57:33 UTC"), not the ISO-8601 form the wire carries. Approvals last minutes, so the day
 * goes without saying. A string that is not an instant is returned as it is.
 */
export function utcClock(at: Date | string): string {
  const date = typeof at === "string" ? new Date(at) : at;
  if (Number.isNaN(date.getTime())) return String(at);
  return `${date.toISOString().slice(11, 19)} UTC`;
}

/**
 * An instant every part can hold: UTC years 1 to 9999. JavaScript takes years 0 and ±275760, which
 * PostgreSQL refuses (no year 0) or cannot read back (`+275760-…`): such a query parameter or
 * cursor is the caller's error, not the store's.
 */
export function isStorableInstant(date: Date): boolean {
  const year = date.getUTCFullYear();
  return !Number.isNaN(date.getTime()) && year >= 1 && year <= 9999;
}
