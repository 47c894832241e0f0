import { DrizzleQueryError } from "drizzle-orm";
import { AppError, answerWithin, isAppError } from "../errors/index.js";

/**
 * The store's error boundary. A driver error carries the SQL and its parameters in its message
 * ("Failed query: select ... params: 0x7099...,2026-..."), which must never reach a client or a
 * model. So every call to a store (the ledger, the idempotency store) goes through {@link guardStore}: an error meaning the database
 * cannot be reached becomes AppError `store_unavailable` (503, retry later), any other driver
 * error becomes AppError `internal`; both keep the original as `cause`, for the logs only. The
 * ledger's own errors (unknown payment, refused transition, bad arguments) pass unchanged.
 */

/** Node socket errors and postgres.js connection errors: the server is unreachable or went away. */
const UNREACHABLE_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "EHOSTDOWN",
  "ENETUNREACH",
  "ENETDOWN",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EPIPE",
  "CONNECTION_CLOSED",
  "CONNECTION_ENDED",
  "CONNECTION_DESTROYED",
  "CONNECT_TIMEOUT",
]);

/**
 * SQLSTATEs of an unavailable server: class 08 (connection exception), 53 (insufficient resources,
 * e.g. 53300 too many connections), 57P01-57P03 (shutting down, crashed, starting up).
 */
const UNAVAILABLE_SQLSTATE = /^(08[0-9A-Z]{3}|53[0-9A-Z]{3}|57P0[123])$/;

/** PGlite's message once its client is closed (the embedded store is gone). */
const PGLITE_CLOSED = /PGlite is closed/;

/** The error and its causes (and an AggregateError's members), outermost first, bounded. */
function chain(error: unknown): unknown[] {
  const out: unknown[] = [];
  const queue: unknown[] = [error];
  while (queue.length > 0 && out.length < 16) {
    const next = queue.shift();
    if (next === undefined || next === null || out.includes(next)) continue;
    out.push(next);
    if (next instanceof AggregateError) queue.push(...next.errors);
    if (next instanceof Error && next.cause !== undefined) queue.push(next.cause);
  }
  return out;
}

function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
}

/** Whether an error (or one of its causes) means the database cannot be reached right now. */
export function isStoreUnavailable(error: unknown): boolean {
  if (isAppError(error)) return error.code === "store_unavailable";
  return chain(error).some((e) => {
    const code = codeOf(e);
    if (code && (UNREACHABLE_CODES.has(code) || UNAVAILABLE_SQLSTATE.test(code))) return true;
    return e instanceof Error && PGLITE_CLOSED.test(e.message);
  });
}

/** Whether the error came from the driver (it may quote SQL and parameters). */
function isDriverError(error: unknown): boolean {
  return chain(error).some(
    (e) =>
      e instanceof DrizzleQueryError ||
      (e instanceof Error && e.name === "PostgresError") ||
      /^[0-9A-Z]{5}$/.test(codeOf(e) ?? ""),
  );
}

/** Map an error thrown by the store to what may travel further (see the module comment). */
export function toStoreError(error: unknown): unknown {
  if (isAppError(error)) return error;
  if (isStoreUnavailable(error)) {
    return new AppError(
      "store_unavailable",
      "The payment ledger (its database) cannot be reached right now; try again shortly.",
      { cause: error },
    );
  }
  if (isDriverError(error)) {
    return new AppError("internal", "The payment ledger failed on an internal error.", { cause: error });
  }
  return error;
}

/** How long a read may wait on a database that does not answer (a frozen connection never fails). */
export const READ_WITHIN_MS = 5_000;

/**
 * Wrap every method of a store object (the ledger, the idempotency store) so what it throws passes
 * {@link toStoreError}. The methods named in `reads` also give up after `readWithinMs`: a read
 * from a server that stopped answering (a frozen connection, a stalled proxy) is then
 * `store_unavailable`, as an unreachable one is, instead of a request that never ends. Writes are
 * never cut short: whether one committed is known only from its answer.
 */
export function guardStore<T extends object>(
  target: T,
  bounds: { reads?: readonly (keyof T & string)[]; readWithinMs?: number } = {},
): T {
  const reads = new Set<string>(bounds.reads ?? []);
  const within = bounds.readWithinMs ?? READ_WITHIN_MS;
  return new Proxy(target, {
    get(object, property) {
      const value: unknown = Reflect.get(object, property, object);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        let result: unknown;
        try {
          result = value.apply(object, args);
        } catch (error) {
          throw toStoreError(error);
        }
        // Drizzle's query builders are thenables, not Promises: they are answers all the same.
        if (!isThenable(result)) return result;
        const answered = Promise.resolve(result).catch((error: unknown) => {
          throw toStoreError(error);
        });
        return typeof property === "string" && reads.has(property)
          ? answerWithin(answered, within, readTooLate)
          : answered;
      };
    },
  });
}

const isThenable = (value: unknown): value is PromiseLike<unknown> =>
  typeof (value as { then?: unknown } | null)?.then === "function";

const readTooLate = () =>
  new AppError(
    "store_unavailable",
    "The payment ledger (its database) did not answer in time; try again shortly.",
  );
