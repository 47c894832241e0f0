import { type ServerType, serve } from "@hono/node-server";
import type { Hono } from "hono";
import type { ToolProvider } from "./agent/index.js";
import type { Config } from "./config/index.js";
import { createApp } from "./http/app.js";
import type { IdempotencyStore } from "./http/chat.js";
import { Lifecycle } from "./http/lifecycle.js";
import { createRateLimiter, type RateLimiter } from "./limits/rate-limit.js";
import type { Logger } from "./log/index.js";
import { createModelRegistry, type ModelRegistry } from "./models/index.js";

/**
 * The composition root: config -> models -> (payments) -> agent -> app. `main.ts` calls it for the
 * real process; tests and benchmarks call it to get the same service on a random port.
 */
export interface Service {
  app: Hono;
  lifecycle: Lifecycle;
  models: ModelRegistry;
  /** Drain open turns (up to the grace period) and release resources. Does not close the listener. */
  shutdown(): Promise<void>;
}

export interface ServiceOverrides {
  models?: ModelRegistry;
  tools?: ToolProvider;
  rateLimiter?: RateLimiter;
  health?: () => Record<string, unknown>;
  idempotency?: IdempotencyStore;
  onShutdown?: () => Promise<void>;
}

export function createService(config: Config, logger: Logger, overrides: ServiceOverrides = {}): Service {
  const models = overrides.models ?? createModelRegistry(config.models);
  const rateLimiter = overrides.rateLimiter ?? createRateLimiter(config.rateLimit);
  const lifecycle = new Lifecycle();
  const app = createApp({
    agent: {
      models,
      maxSteps: config.maxSteps,
      ...(overrides.tools ? { tools: overrides.tools } : {}),
      onToolError: (tool, error) => logger.warn("tool failed", { tool, error: String(error) }),
    },
    rateLimiter,
    lifecycle,
    logger,
    config,
    health: () => ({ models: models.describe(), ...overrides.health?.() }),
    ...(overrides.idempotency ? { idempotency: overrides.idempotency } : {}),
  });
  return {
    app,
    lifecycle,
    models,
    async shutdown() {
      await lifecycle.drain(config.shutdownGraceMs);
      await rateLimiter.close();
      await overrides.onShutdown?.();
    },
  };
}

/** Listen on config.host:config.port (0 = a free port) and resolve with the bound URL. */
export function listen(
  app: Hono,
  config: Pick<Config, "host" | "port">,
): Promise<{ server: ServerType; url: string }> {
  return new Promise((resolve) => {
    const server = serve({ fetch: app.fetch, port: config.port, hostname: config.host }, (info) => {
      const host = info.family === "IPv6" ? `[${info.address}]` : info.address;
      resolve({ server, url: `http://${host}:${info.port}` });
    });
  });
}

/** Stop accepting connections; resolves when the listener is closed (open streams keep running). */
export function closeServer(server: ServerType): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    if ("closeIdleConnections" in server && typeof server.closeIdleConnections === "function") {
      server.closeIdleConnections();
    }
  });
}
