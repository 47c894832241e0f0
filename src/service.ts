import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { getRequestListener, type ServerType } from "@hono/node-server";
import type { Hono } from "hono";
import type { ToolProvider } from "./agent/index.js";
import type { Config } from "./config/index.js";
import { type AppDeps, createApp } from "./http/app.js";
import { discardRest } from "./http/body.js";
import type { ChatRouteDeps, IdempotencyStore } from "./http/chat.js";
import {
  onCheckExpectation,
  onClientError,
  onConnect,
  onUnreadableTarget,
  withHostRequired,
} from "./http/client-error.js";
import { Lifecycle } from "./http/lifecycle.js";
import { createReadiness, type ReadinessCheck, redisCheck } from "./http/readiness.js";
import type { Logger } from "./log/index.js";
import { createModelRegistry, type ModelRegistry } from "./models/index.js";
import type { Observability } from "./observe/index.js";
import { createRateLimiter, type RateLimiter } from "./ratelimit/rate-limit.js";

/**
 * The HTTP service: the Hono app, its lifecycle (drain on shutdown) and readiness, assembled from
 * the parts the composition root (`bootstrap.ts`) passes in; what it is not given (models, the rate
 * limiter) it makes from config, so tests can build the same service with fakes. It opens nothing
 * and starts no timer: connections are made on first use.
 */
export interface Service {
  app: Hono;
  lifecycle: Lifecycle;
  models: ModelRegistry;
  /**
   * Drain open turns (up to the grace period), let work they left running finish (payments
   * settling, bounded), and release resources. Does not close the listener.
   */
  shutdown(): Promise<void>;
  /** Export the spans ended so far, when tracing is on (a serverless function before it is frozen). */
  flushTelemetry(): Promise<void>;
}

export interface ServiceOverrides {
  models?: ModelRegistry;
  tools?: ToolProvider;
  rateLimiter?: RateLimiter;
  health?: () => Record<string, unknown>;
  idempotency?: IdempotencyStore;
  /** Takes up payments answered in the user's wallet (the payments capability). */
  resumeApproval?: ChatRouteDeps["resumeApproval"];
  /** The payments face's reads behind GET /api/payments(/:id). */
  payments?: AppDeps["payments"];
  /** The approval page's endpoints (GET and POST /api/approvals/:paymentId). */
  approvals?: AppDeps["approvals"];
  /** Tabs' routes (/api/tabs). */
  tabs?: AppDeps["tabs"];
  /** Rebuilds the answer of an idempotency key whose attempt died, from the ledger. */
  rebuild?: AppDeps["rebuild"];
  /** Signing in with a wallet, and its sessions' reads of the payment history (src/signin). */
  walletSignIn?: AppDeps["walletSignIn"];
  /** The MCP server at `/mcp`: the payments face and the approval page's address. */
  mcp?: AppDeps["mcp"];
  /** The built web page served at `/` (default `dist/web`); null serves none. */
  webDir?: string | null;
  /** Dependencies GET /readyz checks besides Redis (the store, the chains). */
  readiness?: ReadinessCheck[];
  /** Bound of each readiness check (default 2 s). */
  readinessTimeoutMs?: number;
  onShutdown?: () => Promise<void>;
  /**
   * Traces and metrics (src/observe): spans of turns and MCP requests, the model's telemetry,
   * GET /metrics when METRICS_TOKEN is set; flushed and stopped last on shutdown.
   */
  observe?: Observability;
  /** The clock (request deadlines, idempotency leases, the in-memory rate limit); default the system's. */
  now?: () => Date;
  /** Operator keys for auth, and the operator API (docs/deploy.md#operating-it). */
  operator?: AppDeps["operator"];
}

/** Beyond the service timeout: the immediate on-chain check of an unclear payment and ledger writes. */
const BACKGROUND_MARGIN_MS = 10_000;

export function createService(config: Config, logger: Logger, overrides: ServiceOverrides = {}): Service {
  const models = overrides.models ?? createModelRegistry(config.models);
  const now = overrides.now;
  const rateLimiter =
    overrides.rateLimiter ??
    createRateLimiter({ ...config.rateLimit, ...(now ? { now: () => now().getTime() } : {}) });
  const lifecycle = new Lifecycle();
  const ping = rateLimiter.ping?.bind(rateLimiter);
  const redis = ping ? redisCheck(ping) : undefined;
  const readiness = createReadiness(
    [...(redis ? [redis] : []), ...(overrides.readiness ?? [])],
    overrides.readinessTimeoutMs,
  );
  const observe = overrides.observe;
  observe?.metrics.readFrom({ openTurns: () => lifecycle.openTurns });
  const telemetry = observe?.tracing.aiTelemetry;
  const app = createApp({
    agent: {
      models,
      maxSteps: config.maxSteps,
      ...(overrides.tools ? { tools: overrides.tools } : {}),
      onToolError: (tool, error) => logger.error("tool failed", { tool, err: error }),
      // The model's mistake, answered to it: a short warning, not its whole input at error level.
      onMalformedToolCall: (tool, message) =>
        logger.warn("the model's tool call was refused", {
          tool,
          reason: message.split(":")[0]?.slice(0, 80),
        }),
      ...(telemetry ? { telemetry } : {}),
    },
    rateLimiter,
    lifecycle,
    logger,
    config,
    health: () => ({ models: models.describe(), ...overrides.health?.() }),
    readiness,
    ...(overrides.idempotency ? { idempotency: overrides.idempotency } : {}),
    ...(overrides.resumeApproval ? { resumeApproval: overrides.resumeApproval } : {}),
    ...(overrides.payments ? { payments: overrides.payments } : {}),
    ...(overrides.approvals ? { approvals: overrides.approvals } : {}),
    ...(overrides.tabs ? { tabs: overrides.tabs } : {}),
    ...(overrides.rebuild ? { rebuild: overrides.rebuild } : {}),
    ...(overrides.mcp ? { mcp: overrides.mcp } : {}),
    ...(overrides.walletSignIn ? { walletSignIn: overrides.walletSignIn } : {}),
    ...(overrides.now ? { now: overrides.now } : {}),
    ...(overrides.webDir !== undefined ? { webDir: overrides.webDir } : {}),
    ...(observe?.tracing.tracer ? { tracer: observe.tracing.tracer } : {}),
    ...(observe && config.metricsToken
      ? {
          metrics: {
            token: config.metricsToken,
            contentType: observe.metrics.contentType,
            render: () => observe.metrics.render(),
          },
        }
      : {}),
    ...(overrides.operator ? { operator: overrides.operator } : {}),
  });
  return {
    app,
    lifecycle,
    models,
    flushTelemetry: async () => {
      await observe?.flush().catch((error: unknown) => logger.warn("cannot export spans", { err: error }));
    },
    async shutdown() {
      // A payment left running by a stream that ended is bounded by the service timeout plus its
      // on-chain check; it records its outcome before the store closes.
      const { abandoned } = await lifecycle.drain(
        config.shutdownGraceMs,
        config.payments.serviceTimeoutMs + BACKGROUND_MARGIN_MS,
      );
      if (abandoned > 0) logger.warn("shutdown left work unfinished", { abandoned });
      try {
        await rateLimiter.close();
        await overrides.onShutdown?.();
      } finally {
        // Last: the spans of what shutting down finished are exported too.
        await observe?.shutdown();
      }
    },
  };
}

/** How long a request's headers, then its whole body, may take to arrive (not its answer). */
export const HEADERS_TIMEOUT_MS = 20_000;
export const REQUEST_BODY_TIMEOUT_MS = 30_000;

/**
 * Listen on config.host:config.port (0 = a free port) and resolve with the bound URL. Requests
 * Node's parser refuses get a problem+json answer too (src/http/client-error.ts).
 */
export function listen(
  app: Hono,
  config: Pick<Config, "host" | "port">,
  timeouts: { headersMs: number; bodyMs: number } = {
    headersMs: HEADERS_TIMEOUT_MS,
    bodyMs: REQUEST_BODY_TIMEOUT_MS,
  },
): Promise<{ server: ServerType; url: string }> {
  return new Promise((resolve, reject) => {
    const listener = getRequestListener(app.fetch, {
      hostname: config.host,
      // The adapter would close a connection whose body is still arriving 500 ms after the answer,
      // losing the answer to a reset; the rest is read and dropped instead (below).
      autoCleanupIncoming: false,
      // A target or Host the adapter cannot make a URL of gets problem+json, not its bare 400.
      errorHandler: onUnreadableTarget,
    });
    const server = createServer(
      {
        // A request's headers and body (at most 256 KiB) arrive in seconds; one still arriving after
        // these is answered 408 and closed, instead of holding a connection for Node's 300 s.
        headersTimeout: timeouts.headersMs,
        requestTimeout: timeouts.bodyMs,
        connectionsCheckingInterval: Math.min(2_000, Math.ceil(timeouts.bodyMs / 4)),
        // Node answers a missing Host with a bare 400; withHostRequired answers it as a problem.
        requireHostHeader: false,
      },
      withHostRequired(listener),
    );
    server.once("error", reject);
    server.on("clientError", onClientError);
    server.on("connect", onConnect);
    server.on("checkExpectation", onCheckExpectation);
    server.on("request", (incoming: IncomingMessage, outgoing: ServerResponse) => {
      outgoing.once("finish", () => discardRest(incoming, outgoing));
    });
    server.listen(config.port, config.host, () => {
      server.off("error", reject);
      const address = server.address();
      if (address === null || typeof address === "string") {
        reject(new Error(`listening on ${String(address)}, not a TCP port`));
        return;
      }
      const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
      resolve({ server, url: `http://${host}:${address.port}` });
    });
  });
}

/** Stop accepting connections; resolves when the listener is closed (open streams keep running). */
export function closeServer(server: ServerType): Promise<void> {
  const closed = new Promise<void>((resolve) => {
    server.close(() => resolve());
  });
  dropConnections(server, "idle");
  return closed;
}

/** Close the server's keep-alive connections: idle ones, or all (once every stream has ended). */
export function dropConnections(server: ServerType, which: "idle" | "all"): void {
  const method = which === "idle" ? "closeIdleConnections" : "closeAllConnections";
  const close = (server as unknown as Partial<Record<typeof method, () => void>>)[method];
  if (typeof close === "function") close.call(server);
}
