import { createHash, timingSafeEqual } from "node:crypto";
import type { Context, Hono } from "hono";
import { AppError } from "../errors/index.js";
import type { Logger } from "../log/index.js";
import { type ControlPlane, KEY_NAME, type PauseTarget, pauseTargetOf } from "../operator/index.js";
import { readJsonBody } from "./body.js";
import { type AuditRoutesDeps, mountAuditRoutes } from "./operator-audit.js";
import { badParam } from "./query-params.js";
import type { Middleware } from "./vars.js";

/**
 * The operator API, `/api/operator/*` (docs/deploy.md#operating-it): keys, pauses and the payments
 * an operator checks after an incident, behind the operator token (OPERATOR_TOKEN). JSON in and
 * out; amounts are USD decimal strings, times ISO-8601. A missing or wrong token: 401.
 */
export interface OperatorRoutesDeps {
  plane: ControlPlane;
  /** The operator token (OPERATOR_TOKEN, or the one made at start). Never logged. */
  token: string;
  /** The audit trail's reads (docs/audit.md): verify, export, refusals; absent: no such routes. */
  audit?: AuditRoutesDeps["audit"];
  logger?: Logger;
}

const BODY_MAX_BYTES = 16 * 1024;
const NO_STORE = { "Cache-Control": "no-store" };

const digest = (text: string) => createHash("sha256").update(text, "utf8").digest();

/**
 * Guards a route with the operator token, compared in constant time (of the tokens' hashes). The
 * audit routes (another part) mount behind the same guard.
 */
export function operatorGuard(token: string): Middleware {
  const expected = digest(token);
  return async (c, next) => {
    const sent = /^Bearer\s+(\S+)$/i.exec(c.req.header("authorization") ?? "")?.[1];
    if (!sent || !timingSafeEqual(digest(sent), expected))
      throw new AppError("unauthorized", "Send Authorization: Bearer <operator token>.");
    await next();
  };
}

/** Who made a change, for the audit trail: `X-Operator` (a name, not a secret), else "operator-api". */
function operatorName(c: Context): string {
  const name = c.req.header("x-operator")?.trim() ?? "";
  return /^[\w.@: -]{1,64}$/.test(name) ? name : "operator-api";
}

function keyName(c: Context): string {
  const name = c.req.param("name") ?? "";
  // Not a name a key can have: not echoed (it may hold controls or direction overrides).
  if (!KEY_NAME.test(name)) throw new AppError("not_found", "No key has that name.");
  return name;
}

/** Refuses a query parameter the route does not take, as the other listings do. */
function onlyParams(c: Context, known: string[]): void {
  for (const name of new URL(c.req.url).searchParams.keys())
    if (!known.includes(name)) throw badParam(name, "unknown parameter");
}

function limitOf(c: Context): number {
  onlyParams(c, ["limit"]);
  const all = c.req.queries("limit") ?? [];
  if (all.length > 1)
    throw new AppError("invalid_request", "Send limit once.", {
      fields: [{ path: "limit", message: "once" }],
    });
  const text = all[0];
  if (text === undefined) return 50;
  const n = Number(text);
  if (!/^[0-9]{1,3}$/.test(text) || n < 1 || n > 500)
    throw new AppError("invalid_request", "limit must be a whole number from 1 to 500.", {
      fields: [{ path: "limit", message: "1 to 500" }],
    });
  return n;
}

const body = (c: Context) => readJsonBody(c.req.raw, BODY_MAX_BYTES);

export function mountOperatorRoutes(app: Hono, deps: OperatorRoutesDeps): void {
  const { plane } = deps;
  const guard = operatorGuard(deps.token);
  app.use("/api/operator/*", guard);
  if (deps.audit)
    mountAuditRoutes(app, { audit: deps.audit, guard, ...(deps.logger ? { logger: deps.logger } : {}) });
  app.get("/api/operator/keys", async (c) => c.json({ keys: await plane.listKeys() }, 200, NO_STORE));
  app.post("/api/operator/keys", async (c) => {
    const created = await plane.createKey(await body(c), operatorName(c));
    return c.json(created, 201, NO_STORE);
  });
  app.post("/api/operator/keys/:name/revoke", async (c) =>
    c.json({ key: await plane.revokeKey(keyName(c), operatorName(c)) }, 200, NO_STORE),
  );
  app.post("/api/operator/keys/:name/rotate", async (c) =>
    c.json(await plane.rotateKey(keyName(c), operatorName(c)), 200, NO_STORE),
  );
  app.get("/api/operator/pauses", async (c) => c.json({ pauses: await plane.listPauses() }, 200, NO_STORE));
  app.post("/api/operator/pause", async (c) => {
    const input = (await body(c)) as Record<string, unknown> | null;
    const { reason, ...scope } = typeof input === "object" && input !== null ? input : {};
    const target: PauseTarget = pauseTargetOf(scope);
    return c.json({ pauses: await plane.pause(target, reason, operatorName(c)) }, 200, NO_STORE);
  });
  app.post("/api/operator/resume", async (c) => {
    const target = pauseTargetOf(await body(c));
    return c.json({ pauses: await plane.resume(target, operatorName(c)) }, 200, NO_STORE);
  });
  app.get("/api/operator/payments", async (c) =>
    c.json({ payments: await plane.payments(limitOf(c)) }, 200, NO_STORE),
  );
  app.get("/api/operator/unclear", async (c) => {
    onlyParams(c, []);
    return c.json({ payments: await plane.unclear() }, 200, NO_STORE);
  });
}
