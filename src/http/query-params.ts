import { AppError } from "../errors/index.js";
import { isStorableInstant } from "../protocol/clock.js";

/** Query parameters shared by the listings (payments, the operator's audit): one rule each. */

/** A bad query parameter: 400 `invalid_request`, naming it. */
export function badParam(path: string, message: string): AppError {
  return new AppError("invalid_request", `Query parameter ${path}: ${message}.`, {
    fields: [{ path, message }],
  });
}

/**
 * An ISO-8601 date or instant (`2026-03-01`, `2026-03-01T12:00:00Z`, `...T12:00+02:00`) on a day
 * the calendar has (Date would read 2026-02-30 as March 2), in years 1 to 9999; else undefined.
 */
export function parseInstant(value: string): Date | undefined {
  const ok = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2}))?$/.test(value);
  const [y, m, d] = value.slice(0, 10).split("-").map(Number) as [number, number, number];
  const day = new Date(Date.UTC(y, m - 1, d));
  const real = day.getUTCFullYear() === y && day.getUTCMonth() === m - 1 && day.getUTCDate() === d;
  const date = ok && real ? new Date(value) : undefined;
  return date && isStorableInstant(date) ? date : undefined;
}
