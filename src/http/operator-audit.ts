import type { Hono, MiddlewareHandler } from "hono";
import type { AuditLog } from "../audit/index.js";
import { AppError } from "../errors/index.js";
import type { Logger } from "../log/index.js";
import { problemResponse } from "./problem.js";
import { badParam, parseInstant } from "./query-params.js";

/**
 * The audit trail's operator routes (docs/audit.md#over-http), mounted behind the operator token
 * (`guard`): the chain's check, the records from a time on as JSON lines, and the latest refusals.
 */
export interface AuditRoutesDeps {
  audit: Pick<AuditLog, "verify" | "export" | "refusals">;
  /** The operator token's check (401 `unauthorized` without it). */
  guard: MiddlewareHandler;
  logger?: Logger;
}

const REFUSALS = { default: 50, max: 500 };

/** The query's parameters, each at most once and none unknown. */
function params(url: string, known: string[]): Map<string, string> {
  const search = new URL(url).searchParams;
  const found = new Map<string, string>();
  for (const [name, value] of search) {
    if (!known.includes(name)) throw badParam(name, "unknown parameter");
    if (found.has(name)) throw badParam(name, "given more than once");
    found.set(name, value);
  }
  return found;
}

function failed(error: unknown, deps: AuditRoutesDeps, what: string): Response {
  if (error instanceof AppError && error.code !== "internal") return problemResponse(error);
  deps.logger?.warn(`audit: ${what} failed`, { err: error });
  return problemResponse(new AppError("store_unavailable", "The audit trail cannot be read now."));
}

/** Records as JSON lines, one page read at a time as the client takes them. */
function ndjson(first: IteratorResult<object>, rest: AsyncIterator<object>, deps: AuditRoutesDeps): Response {
  const encoder = new TextEncoder();
  let pending: IteratorResult<object> | undefined = first;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const next = pending ?? (await rest.next());
        pending = undefined;
        if (next.done) controller.close();
        else controller.enqueue(encoder.encode(`${JSON.stringify(next.value)}\n`));
      } catch (error) {
        deps.logger?.warn("audit: export failed midway", { err: error });
        controller.error(error);
      }
    },
    async cancel() {
      await rest.return?.();
    },
  });
  return new Response(body, {
    status: 200,
    headers: { "Content-Type": "application/x-ndjson", "Cache-Control": "no-store" },
  });
}

export function mountAuditRoutes(app: Hono, deps: AuditRoutesDeps): void {
  app.get("/api/operator/audit/verify", deps.guard, async (c) => {
    try {
      params(c.req.url, []);
      return c.json(await deps.audit.verify(), 200, { "Cache-Control": "no-store" });
    } catch (error) {
      return failed(error, deps, "verify");
    }
  });

  app.get("/api/operator/audit", deps.guard, async (c) => {
    let iterator: AsyncIterator<object>;
    let first: IteratorResult<object>;
    try {
      const text = params(c.req.url, ["since"]).get("since");
      const since = text === undefined ? undefined : parseInstant(text);
      if (text !== undefined && !since) throw badParam("since", "an ISO-8601 date or instant");
      iterator = deps.audit.export(since ?? new Date(0))[Symbol.asyncIterator]();
      // The first read answers before the status line: a store that is down is a 503, not a cut stream.
      first = await iterator.next();
    } catch (error) {
      return failed(error, deps, "export");
    }
    return ndjson(first, iterator, deps);
  });

  app.get("/api/operator/refusals", deps.guard, async (c) => {
    try {
      const text = params(c.req.url, ["limit"]).get("limit");
      const limit = text === undefined ? REFUSALS.default : Number(text);
      if (!/^\d{1,4}$/.test(text ?? "1") || limit < 1 || limit > REFUSALS.max)
        throw badParam("limit", `an integer from 1 to ${REFUSALS.max}`);
      return c.json({ refusals: await deps.audit.refusals(limit) }, 200, { "Cache-Control": "no-store" });
    } catch (error) {
      return failed(error, deps, "refusals");
    }
  });
}
