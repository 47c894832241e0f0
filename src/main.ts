import { createLogger } from "./log/index.js";
import { DEFAULT_MODEL } from "./protocol/index.js";

/**
 * The process entry point: `npm start` (`node --import ./src/early-signals.mjs src/start.mjs`) runs
 * this file compiled with everything it loads into dist/main.js (scripts/build.mjs).
 *
 * SIGTERM and SIGINT are handled from the first line that runs, before the rest of the service is
 * loaded (loading it and starting the devnet take seconds): a signal at any moment, while modules
 * load, while the devnet starts, with streams open, ends in a graceful stop and exit code 0. A
 * signal that arrives before the service listens stops it as soon as what is starting has started
 * (so nothing it began, such as the devnet, is left behind). Further signals are only logged.
 * Run it with Node itself: a wrapper that relays signals (the `tsx` CLI gives its child 30 ms to
 * acknowledge one, then kills it and exits 143) breaks that promise.
 */
const logger = createLogger({ level: process.env.LOG_LEVEL ?? "info" });
/** loading: nothing started yet, a stop is immediate; starting: the service (devnet...) is starting. */
let phase: "loading" | "starting" | "running" = "loading";
let stopSignal: string | undefined;
let onStop: ((signal: string) => void) | undefined;

function onSignal(signal: string): void {
  if (stopSignal) {
    logger.info("already stopping", { signal });
    return;
  }
  stopSignal = signal;
  if (phase === "loading") {
    logger.info("stopped before starting", { signal });
    process.exit(0);
  }
  if (onStop) onStop(signal);
  else logger.info("stop requested while starting; stopping once started", { signal });
}

/**
 * Launched by npm, which does not pass signals on (it runs `sh -c`, and a SIGTERM to npm kills npm
 * and sh only): when the launcher is gone, stop as if signalled rather than run orphaned. Started
 * by Node directly (a container, a service manager, `setsid node ... &` from a script that then
 * exits), the parent is not watched: leaving it is not a reason to stop.
 */
function watchLauncher(): void {
  const launcher = process.ppid;
  if (launcher <= 1 || process.env.npm_lifecycle_event === undefined) return;
  const timer = setInterval(() => {
    if (process.ppid === launcher) return;
    clearInterval(timer); // once: a drain that takes seconds logs it once, not every second
    onSignal("launcher exited");
  }, 1000);
  timer.unref();
}

async function main(): Promise<void> {
  const { loadConfig, loadDotEnv } = await import("./config/index.js");
  loadDotEnv();
  const config = loadConfig();
  const { bootstrap } = await import("./bootstrap.js");
  const { closeServer, dropConnections, listen } = await import("./service.js");
  watchLauncher();

  phase = "starting";
  const running = await bootstrap(config, logger);
  const service = running.service;
  let listening: Awaited<ReturnType<typeof listen>> | undefined;
  if (!stopSignal) {
    listening = await listen(service.app, config);
    const models = service.models.describe();
    logger.info("listening", { url: listening.url, provider: service.models.provider });
    // `npm run chat -- --devnet` reads where to connect from the devnet's manifest.
    await running.devnet?.announceChatUrl(listening.url).catch((error: unknown) => {
      logger.warn("cannot record the service URL in the devnet manifest", { err: error });
    });
    process.stdout.write(
      `x402 chat agent listening on ${listening.url}\n  open ${listening.url}/ to chat in the browser\n  POST ${listening.url}/api/chat   (model provider: ${service.models.provider}, default model ${models[DEFAULT_MODEL].modelId})\n${running.banner.map((l) => `${l}\n`).join("")}`,
    );
  }

  const stop = async (signal: string): Promise<void> => {
    logger.info("shutting down", {
      signal,
      openTurns: service.lifecycle.openTurns,
      graceMs: config.shutdownGraceMs,
    });
    // Only if something hangs past every bound: the grace period, payments left running, slack.
    const watchdog = setTimeout(
      () => {
        logger.error("shutdown did not finish in time; exiting");
        process.exit(1);
      },
      config.shutdownGraceMs + config.payments.serviceTimeoutMs + 30_000,
    );
    watchdog.unref();
    // The listener stays open while the service drains: a new request gets 503 shutting_down
    // (src/http/app.ts) rather than a refused connection, and open streams finish with their d:.
    try {
      await service.shutdown();
    } catch (error) {
      // The service did stop; what failed while releasing resources is for the log.
      logger.error("error while shutting down", { err: error });
    }
    if (listening) {
      // The answers of the turns that just ended are still on their way out through the app's
      // middleware (promise hops, no timer): one turn of the event loop lets them reach their
      // sockets before the connections are dropped (a JSON answer was lost to this race).
      await new Promise((resolve) => setImmediate(resolve));
      const closed = closeServer(listening.server);
      // Every stream has ended: keep-alive connections must not hold the listener open.
      dropConnections(listening.server, "all");
      await closed;
    }
    logger.info("stopped");
    process.exit(0);
  };
  phase = "running";
  onStop = (signal) => void stop(signal);
  if (stopSignal) onStop(stopSignal);
}

function startService(): void {
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);
  // A signal that came while Node and the loader started (src/early-signals.mjs remembered it).
  const early = (globalThis as Record<symbol, unknown>)[Symbol.for("x402-chat-agent.early-signal")];
  if (early === "SIGTERM" || early === "SIGINT") onSignal(early);
  // A stray rejection is a bug to log, not a reason to drop every open stream and payment.
  process.on("unhandledRejection", (error) => logger.error("unhandled rejection", { err: error }));
  // Every line carries the process id (the logger's base), this one included.
  logger.info("starting");
  main().catch((error: unknown) => {
    if (error instanceof Error && error.name === "ConfigError") {
      process.stderr.write(`${error.message}\n`);
    } else {
      process.stderr.write(`Failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
    }
    process.exit(1);
  });
}

/**
 * `x402-chat-agent keys|pause|resume|audit` (bin/x402-chat-agent.mjs): the operator's commands run
 * from this same build, which holds the store and the configuration (docs/deploy.md#operating-it).
 */
async function runOperatorCommand(argv: string[]): Promise<void> {
  const { loadDotEnv } = await import("./config/index.js");
  loadDotEnv();
  const { operatorMain } = await import("./cli/operator/main.js");
  process.exitCode = await operatorMain(argv, {
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
  });
}

const operatorArgv = (globalThis as Record<symbol, unknown>)[Symbol.for("x402-chat-agent.operator-argv")];
if (Array.isArray(operatorArgv))
  runOperatorCommand(operatorArgv.map(String)).catch((error: unknown) => {
    process.stderr.write(`x402-chat-agent: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  });
else startService();
