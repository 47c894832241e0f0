import { randomUUID } from "node:crypto";
import { getConnInfo } from "@hono/node-server/conninfo";
import type { Tracer } from "@opentelemetry/api";
import { type Context, Hono } from "hono";
import type { AgentDeps } from "../agent/index.js";
import type { JwtConfig } from "../config/index.js";
import { AppError, isAppError } from "../errors/index.js";
import type { Logger } from "../log/index.js";
import type { RateLimiter } from "../ratelimit/rate-limit.js";
import type { WalletSignIn } from "../signin/index.js";
import { allowedMethods } from "./allow.js";
import { type ApprovalRoutesDeps, mountApprovalRoutes } from "./approvals.js";
import { auth, type KeyAuth } from "./auth.js";
import { type ChatRouteDeps, handleChat, type IdempotencyStore } from "./chat.js";
import { readChatRequest } from "./chat-request.js";
import { claimIdempotency, idempotencyKeyHeader } from "./claim.js";
import { cors } from "./cors.js";
import type { OutcomeRebuilder } from "./idempotency.js";
import { createJwtVerifier } from "./jwt.js";
import type { Lifecycle } from "./lifecycle.js";
import { type McpRouteDeps, mountMcp } from "./mcp.js";
import { type MetricsRouteDeps, mountMetrics } from "./metrics.js";
import { mountOperatorRoutes, type OperatorRoutesDeps } from "./operator.js";
import { payer } from "./payer.js";
import { mountPaymentRoutes, type PaymentRoutesDeps } from "./payments.js";
import { problemResponse } from "./problem.js";
import { type RateLimitDeps, rateLimitIp, rateLimitPayer } from "./rate-limit.js";
import type { CheckResult } from "./readiness.js";
import { serveWeb } from "./static.js";
import { mountTabRoutes, type TabRoutesDeps } from "./tabs.js";
import { traceRequest } from "./trace.js";
import type { AuthVars, ChatVars, Middleware } from "./vars.js";
import { mountWalletAuthRoutes } from "./wallet-auth.js";

export interface AppDeps {
  agent: AgentDeps;
  rateLimiter: RateLimiter;
  lifecycle: Lifecycle;
  logger: Logger;
  config: {
    requestTimeoutMs: number;
    heartbeatMs: number;
    /** The lease of an idempotency claim (IDEMPOTENCY_LEASE_MS); default 10 s. */
    idempotencyLeaseMs?: number;
    trustProxy: number;
    /** `jwt`: bearer JWTs of the operator's identity provider (docs/deploy.md#logins-from-your-identity-provider). */
    auth: { tokens: Map<string, string>; required: boolean; jwt?: JwtConfig };
    /** Origins whose pages may call the API (CORS_ORIGINS); none: same-origin only. */
    cors?: { origins: readonly string[] };
  };
  idempotency?: IdempotencyStore;
  /** Takes up payments answered in the user's wallet (docs/protocol.md, "Approval"). */
  resumeApproval?: ChatRouteDeps["resumeApproval"];
  /** The payments face's reads behind GET /api/payments(/:id) (absent: payments are off, no such route). */
  payments?: Pick<PaymentRoutesDeps, "face" | "explorer">;
  /** The approval page's endpoints (/api/approvals/:paymentId); absent: payments are off, no such route. */
  approvals?: ApprovalRoutesDeps;
  /** Tabs' routes (/api/tabs; docs/protocol.md "Tabs"); absent: the service keeps no tabs. */
  tabs?: Pick<TabRoutesDeps, "tabs">;
  /**
   * Signing in with a wallet (`/api/auth/wallet/*`, src/signin) and its sessions' reads of the
   * payment history; absent: no such route, and a wallet session token is refused everywhere.
   */
  walletSignIn?: Pick<WalletSignIn, "challenge" | "signIn" | "signOut" | "session">;
  /** The MCP server at `/mcp` on the payments face (absent: no such route; docs/mcp.md). */
  mcp?: Pick<McpRouteDeps, "face" | "approvalUrl" | "stateSecret" | "tabs">;
  /** Rebuilds the answer of an idempotency key whose attempt died, from the ledger. */
  rebuild?: OutcomeRebuilder;
  /** The clock of every request (deadlines, idempotency leases); default the system's. */
  now?: () => Date;
  /** Extra facts for GET /healthz (provider, networks...). Must hold no secrets. */
  health?: () => Record<string, unknown>;
  /** GET /readyz: checks the dependencies (store, Redis, chains); none: ready once listening. */
  readiness?: () => Promise<CheckResult[]>;
  /** Spans of chat turns and MCP requests (tracing on: OTEL_EXPORTER_OTLP_ENDPOINT); absent: none. */
  tracer?: Tracer;
  /** GET /metrics (METRICS_TOKEN set); absent: no such route. */
  metrics?: MetricsRouteDeps;
  /** The built web page served at `/` (default `dist/web`; src/http/static.ts); null serves none. */
  webDir?: string | null;
  /**
   * Operator keys that auth accepts after the configured tokens, and the operator API at
   * `/api/operator/*` (docs/deploy.md#operating-it); absent: neither.
   */
  operator?: { keys: KeyAuth; routes?: OperatorRoutesDeps };
}

/**
 * The client's address: behind `hops` proxies, the entry the outermost one appended to
 * X-Forwarded-For, counted from the right (whatever the client wrote itself sits to its left and
 * is not read: a client naming a new address on each request would get a new quota each time).
 */
function clientIp(hops: number) {
  return (c: Context): string => {
    if (hops > 0) {
      const entries = c.req.header("x-forwarded-for")?.split(",") ?? [];
      const forwarded = entries[Math.max(0, entries.length - hops)]?.trim();
      if (forwarded) return forwarded;
    }
    try {
      return getConnInfo(c).remote.address ?? "unknown";
    } catch {
      return "unknown";
    }
  };
}

/** `/healthz` (liveness) and `/readyz` (each dependency answered a cheap call just now; docs/protocol.md, "Health"). */
function mountProbes(app: Hono, deps: AppDeps): void {
  app.get("/healthz", (c) =>
    c.json(
      {
        status: deps.lifecycle.isDraining ? "draining" : "ok",
        openTurns: deps.lifecycle.openTurns,
        ...deps.health?.(),
      },
      deps.lifecycle.isDraining ? 503 : 200,
    ),
  );
  app.get("/readyz", async (c) => {
    if (deps.lifecycle.isDraining) {
      return problemResponse(new AppError("shutting_down", "The server is shutting down."));
    }
    const checks = (await deps.readiness?.()) ?? [];
    // Redis only shares the rate limit: without it each instance counts its own quota and serves
    // on (an outage holds no request), so it makes the instance degraded, never unready.
    const down = checks.filter((check) => !check.ok && check.kind !== "redis");
    const degraded = checks.filter((check) => !check.ok && check.kind === "redis");
    if (degraded.length > 0)
      deps.logger.warn("degraded", { down: degraded.map((d) => `${d.name}: ${d.reason ?? "down"}`) });
    if (down.length > 0) {
      deps.logger.warn("not ready", { down: down.map((d) => `${d.name}: ${d.reason ?? "down"}`) });
      return problemResponse(
        new AppError("not_ready", `Not ready: ${down.map((d) => d.name).join(", ")} unavailable.`, {
          details: { checks },
        }),
      );
    }
    const status = degraded.length > 0 ? "degraded" : "ready";
    return c.json({ status, checks }, 200, { "Cache-Control": "no-store" });
  });
}

/**
 * `POST /api/chat`, behind its middleware in this order: a malformed request costs no quota, the
 * quota is keyed on the authenticated caller, and only a request granted its idempotency key runs.
 */
function mountChat(app: Hono, deps: AppDeps, authenticate: Middleware<AuthVars>, quota: RateLimitDeps): void {
  const chatDeps: ChatRouteDeps = {
    agent: deps.agent,
    lifecycle: deps.lifecycle,
    logger: deps.logger,
    requestTimeoutMs: deps.config.requestTimeoutMs,
    heartbeatMs: deps.config.heartbeatMs,
    ...(deps.resumeApproval ? { resumeApproval: deps.resumeApproval } : {}),
    ...(deps.now ? { now: deps.now } : {}),
  };
  app.post(
    "/api/chat",
    readChatRequest(),
    authenticate,
    idempotencyKeyHeader(),
    payer<ChatVars>((vars) => ({ config: vars.chat, scopeId: randomUUID() })),
    rateLimitPayer(quota),
    claimIdempotency({
      approvals: deps.resumeApproval !== undefined,
      logger: deps.logger,
      ...(deps.idempotency ? { idempotency: deps.idempotency } : {}),
      ...(deps.rebuild ? { rebuild: deps.rebuild } : {}),
      ...(deps.config.idempotencyLeaseMs ? { idempotencyLeaseMs: deps.config.idempotencyLeaseMs } : {}),
      ...(deps.now ? { now: deps.now } : {}),
    }),
    (c) => handleChat(c, chatDeps),
  );
  app.all("/api/chat", () =>
    problemResponse(new AppError("method_not_allowed", "Use POST /api/chat."), { Allow: "POST" }),
  );
}

/** Every answer (JSON, problem+json, a stream, a page) tells a browser not to guess its type. */
const noSniff: Middleware = async (c, next) => {
  await next();
  if (c.res.headers.has("X-Content-Type-Options")) return;
  try {
    c.res.headers.set("X-Content-Type-Options", "nosniff");
  } catch {
    c.res = new Response(c.res.body, c.res); // an immutable answer: a copy takes the header
    c.res.headers.set("X-Content-Type-Options", "nosniff");
  }
};

/**
 * While draining, every route but the two probes answers 503 shutting_down (docs/protocol.md,
 * "Limits"): the listener stays open through the grace period, so a request gets this answer
 * rather than a refused connection; `Connection: close` sends its client elsewhere next time.
 */
function drainGate(lifecycle: AppDeps["lifecycle"]): Middleware {
  return async (c, next) => {
    if (!lifecycle.isDraining || c.req.path === "/healthz" || c.req.path === "/readyz") return next();
    return problemResponse(new AppError("shutting_down", "The server is shutting down; retry shortly."), {
      Connection: "close",
    });
  };
}

/**
 * Build the HTTP app from its dependencies. The same app runs under Node (`@hono/node-server`),
 * in tests through `app.request()`, and on fetch-style hosts (`export default app`).
 */
export function createApp(deps: AppDeps): Hono {
  const app = new Hono();
  const known = {
    authTokens: deps.config.auth.tokens,
    requireAuth: deps.config.auth.required,
    ...(deps.operator ? { keys: deps.operator.keys } : {}),
    ...(deps.config.auth.jwt ? { jwt: createJwtVerifier(deps.config.auth.jwt) } : {}),
  };
  // One per route family: an operator key may be scoped to some of them (docs/deploy.md#operating-it).
  const authChat = auth(known, "chat");

  app.use("*", noSniff);
  // First, so that every answer of the API routes (errors and the drain's 503 too) carries them.
  app.use("*", cors({ origins: deps.config.cors?.origins ?? [] }));
  app.use("*", drainGate(deps.lifecycle));
  mountProbes(app, deps);
  if (deps.metrics) mountMetrics(app, deps.metrics);
  if (deps.tracer) {
    app.use("/api/chat", traceRequest(deps.tracer, "chat.turn"));
    app.use("/mcp", traceRequest(deps.tracer, "mcp.request"));
  }
  const quota: RateLimitDeps = { rateLimiter: deps.rateLimiter, clientIp: clientIp(deps.config.trustProxy) };
  mountChat(app, deps, authChat, quota);
  if (deps.operator?.routes) mountOperatorRoutes(app, deps.operator.routes);
  const signIn = deps.walletSignIn;
  if (deps.payments) {
    mountPaymentRoutes(app, {
      ...deps.payments,
      logger: deps.logger,
      auth: auth(known, "history"),
      ...(signIn ? { walletSessions: (token: string) => signIn.session(token) } : {}),
    });
  }
  if (signIn) {
    const ip = clientIp(deps.config.trustProxy);
    mountWalletAuthRoutes(app, { signIn, rateLimiter: deps.rateLimiter, clientIp: ip });
  }
  if (deps.tabs) {
    const sessions = signIn ? { walletSessions: (token: string) => signIn.session(token) } : {};
    mountTabRoutes(app, {
      ...deps.tabs,
      ...sessions,
      auth: authChat,
      limit: rateLimitIp(quota),
      logger: deps.logger,
      lifecycle: deps.lifecycle,
    });
  }
  if (deps.approvals) {
    const ip = clientIp(deps.config.trustProxy);
    const { rateLimiter, lifecycle } = deps;
    mountApprovalRoutes(app, { ...deps.approvals, rateLimiter, clientIp: ip, lifecycle });
  }
  if (deps.mcp) {
    mountMcp(app, {
      ...deps.mcp,
      auth: auth(known, "mcp"),
      quota,
      requestTimeoutMs: deps.config.requestTimeoutMs,
      logger: deps.logger,
      lifecycle: deps.lifecycle,
      origins: deps.config.cors?.origins ?? [],
      ...(deps.now ? { now: deps.now } : {}),
    });
  }
  // The web chat page at `/` and its assets; any other path goes on to the routes after it.
  const web = deps.webDir === null ? undefined : serveWeb(deps.webDir);
  if (web) app.get("*", web);
  app.notFound(async (c) => {
    // The page and its files are served by its catch-all GET, which the routes do not name.
    const page = web && (await web.serves(c.req.path)) ? ["GET"] : [];
    const allow = allowedMethods(app.routes, c.req.path, page);
    if (allow.length === 0) {
      return problemResponse(new AppError("not_found", `No route for ${c.req.method} ${c.req.path}.`));
    }
    const error = new AppError("method_not_allowed", `${c.req.path} takes ${allow.join(", ")}.`);
    return problemResponse(error, { Allow: allow.join(", ") });
  });
  // Middleware and routes refuse a request by throwing an AppError: its problem+json answer.
  app.onError((error, c) => {
    if (isAppError(error)) {
      if (error.status >= 500) {
        deps.logger.warn("request refused", { path: c.req.path, code: error.code, err: error });
      }
      return problemResponse(error);
    }
    deps.logger.error("unhandled error", { path: c.req.path, err: error });
    return problemResponse(new AppError("internal", "Something went wrong."));
  });
  return app;
}
