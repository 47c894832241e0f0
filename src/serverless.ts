import { bootstrap, type Running } from "./bootstrap.js";
import { type Config, ConfigError, loadConfig, withoutBlanks } from "./config/index.js";
import { AppError } from "./errors/index.js";
import { problemResponse } from "./http/problem.js";
import { createLogger, type Logger } from "./log/index.js";

/**
 * The service as a serverless function: a Web `Request` -> `Response` handler running the same app
 * the process runs (`bootstrap()`, the composition root), built once per function instance on its
 * first request and reused by the next ones (docs/deploy.md, "Serverless").
 *
 * - The platform's function deadline comes from `FUNCTION_DEADLINE_MS`: the chat deadline
 *   (`REQUEST_TIMEOUT_MS`) is lowered to fit in it, less {@link FUNCTION_MARGIN_MS}, so a stream
 *   ends with its `d:` line before the platform kills the function.
 * - Ledger writes finish before the function returns: the work a turn leaves running (a payment
 *   still settling at the deadline, the idempotent outcome) is handed to the platform's
 *   `waitUntil` where it offers one (Netlify's and Cloudflare-style `context.waitUntil`, Vercel's
 *   request context); where it does not, the response body closes only once that work is done
 *   (the `d:` line is already out).
 * - `PAYMENTS=devnet` is refused (a function cannot host the local chains); with payments on, the
 *   ledger is PostgreSQL (`DATABASE_URL`) unless `DATA_DIR` is set on purpose.
 * - A configuration that cannot be used answers 500 `misconfigured` with the reason; a start that
 *   fails otherwise answers 503 `not_ready`, and the next request tries again.
 */

/** Kept between the end of the chat deadline and the platform's: flushing `d:` and the last writes. */
export const FUNCTION_MARGIN_MS = 1_000;

/** What a platform passes beside the request (Netlify's `context`, a Cloudflare-style `ctx`). */
export interface PlatformContext {
  waitUntil?(work: Promise<unknown>): void;
}

export interface FetchHandler {
  /** Netlify: `(request, context)`; Cloudflare-style and Vercel: `fetch(request, env, ctx)`. */
  fetch(request: Request, envOrContext?: unknown, ctx?: PlatformContext): Promise<Response>;
  /** Stop the app (tests; a platform just freezes the instance). */
  close(): Promise<void>;
}

export interface FetchHandlerOptions {
  /** The environment to configure from (default: `process.env`). */
  env?: Record<string, string | undefined>;
  logger?: Logger;
  /** What builds the app from the configuration (default: `bootstrap`, as `npm start` does). */
  start?: (config: Config, logger: Logger) => Promise<Pick<Running, "service">>;
}

/** The configuration a function runs with: the chat deadline fitted inside the function's. */
export function serverlessConfig(given: Record<string, string | undefined>): Config {
  const env = withoutBlanks(given); // as loadConfig reads it: PAYMENTS= is the default, devnet
  if ((env.PAYMENTS ?? "devnet") === "devnet")
    throw new ConfigError(
      "PAYMENTS: a serverless function cannot run the embedded devnet; set PAYMENTS=external (with DATABASE_URL) or PAYMENTS=off",
    );
  if (env.PAYMENTS !== "off" && !env.DATABASE_URL && !env.DATA_DIR)
    throw new ConfigError(
      "DATABASE_URL: a serverless function keeps no disk; the ledger needs a PostgreSQL server (or set DATA_DIR on purpose)",
    );
  const raw = env.FUNCTION_DEADLINE_MS;
  if (raw === undefined || raw === "") return loadConfig(env);
  const deadline = Number(raw);
  if (!Number.isInteger(deadline) || deadline <= FUNCTION_MARGIN_MS + 100)
    throw new ConfigError(
      `FUNCTION_DEADLINE_MS: must be an integer number of milliseconds above ${FUNCTION_MARGIN_MS + 100} (got ${JSON.stringify(raw)})`,
    );
  const fitted = deadline - FUNCTION_MARGIN_MS;
  const requested = env.REQUEST_TIMEOUT_MS ? Number(env.REQUEST_TIMEOUT_MS) : Number.POSITIVE_INFINITY;
  // loadConfig validates the result (MIN_TIME_LEFT_MS must stay below it, and so on).
  return loadConfig({ ...env, REQUEST_TIMEOUT_MS: String(Math.min(requested, fitted)) });
}

/** The platform's `waitUntil`, from its context argument or Vercel's request context. */
function waitUntilOf(envOrContext: unknown, ctx: PlatformContext | undefined): PlatformContext["waitUntil"] {
  for (const candidate of [ctx, envOrContext]) {
    const fn = (candidate as PlatformContext | undefined)?.waitUntil;
    if (typeof fn === "function") return fn.bind(candidate);
  }
  // @vercel/functions' waitUntil reads this global; the Vercel runtime sets it per request.
  const vercel = (globalThis as Record<symbol, { get?: () => PlatformContext } | undefined>)[
    Symbol.for("@vercel/request-context")
  ];
  const fromVercel = vercel?.get?.()?.waitUntil;
  return typeof fromVercel === "function" ? fromVercel : undefined;
}

/** A body that closes only once `after()` has settled (its bytes flow through unchanged). */
function closingAfter(
  body: ReadableStream<Uint8Array>,
  after: () => Promise<void>,
): ReadableStream<Uint8Array> {
  return body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      flush: () => after(),
    }),
  );
}

/**
 * What a failed start answers: a configuration that cannot be used is 500 `misconfigured` with its
 * reason (a retry cannot help; the message names variables, never their secret values), anything
 * else (the database not reachable yet...) 503 `not_ready`, retried by the next request.
 */
export function startFailure(error: unknown): AppError {
  if (error instanceof ConfigError)
    return new AppError("misconfigured", `The service is misconfigured: ${error.message}`);
  return new AppError("not_ready", "The service could not start; retry shortly.");
}

export function createFetchHandler(options: FetchHandlerOptions = {}): FetchHandler {
  const env = options.env ?? process.env;
  const logger = options.logger ?? createLogger({ level: env.LOG_LEVEL ?? "info" });
  const build = options.start ?? bootstrap;
  let starting: Promise<Pick<Running, "service">> | undefined;
  const start = (): Promise<Pick<Running, "service">> => {
    if (starting) return starting;
    const began = performance.now();
    const opening = (async () => {
      const config = serverlessConfig(env);
      const running = await build(config, logger);
      const ms = Math.round(performance.now() - began);
      // The first request's deadline runs from here; the platform's ran from the invocation.
      if (ms > FUNCTION_MARGIN_MS)
        logger.warn("serverless cold start took longer than the deadline's margin", {
          ms,
          marginMs: FUNCTION_MARGIN_MS,
        });
      return running;
    })();
    starting = opening;
    // A failed start is not kept: the next invocation tries again.
    opening.catch(() => {
      if (starting === opening) starting = undefined;
    });
    return opening;
  };

  async function fetch(request: Request, envOrContext?: unknown, ctx?: PlatformContext): Promise<Response> {
    let running: Pick<Running, "service">;
    try {
      running = await start();
    } catch (error) {
      logger.error("serverless start failed", { err: error });
      return problemResponse(startFailure(error));
    }
    const response = await running.service.app.fetch(request);
    // The turn is tracked by now (the route registers it before answering): idle() covers it,
    // the work it leaves running and its recorded outcome.
    const { lifecycle } = running.service;
    // Then the request's spans are exported, before the platform freezes the function.
    const idle = () => lifecycle.idle().then(() => running.service.flushTelemetry());
    const waitUntil = waitUntilOf(envOrContext, ctx);
    if (waitUntil) {
      waitUntil(idle());
      return response;
    }
    if (!response.body) {
      await idle();
      return response;
    }
    return new Response(closingAfter(response.body, idle), {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  }

  return {
    fetch,
    async close() {
      const running = await starting?.catch(() => undefined);
      await running?.service.shutdown();
    },
  };
}

/**
 * The handler configured from `process.env`, started on its first request. Vercel (Node runtime,
 * Fluid compute) and Cloudflare-style hosts take it as it is (`export default handler`); Netlify
 * takes `(request, context) => handler.fetch(request, context)` (docs/deploy.md).
 */
const handler: FetchHandler = createFetchHandler();
export default handler;
