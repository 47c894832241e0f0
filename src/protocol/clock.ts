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
