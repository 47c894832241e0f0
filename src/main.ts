import { bootstrap } from "./bootstrap.js";
import { ConfigError, loadConfig, loadDotEnv } from "./config/index.js";
import { createLogger } from "./log/index.js";
import { closeServer, listen } from "./service.js";

/** The process entry point: `npm start`. */
async function main(): Promise<void> {
  const logger = createLogger();
  loadDotEnv();
  const config = loadConfig();
  const running = await bootstrap(config, logger);
  const service = running.service;
  const { server, url } = await listen(service.app, config);
  const models = service.models.describe();
  logger.info("listening", { url, provider: service.models.provider });
  process.stdout.write(
    `x402 chat agent listening on ${url}\n  POST ${url}/api/chat   (model provider: ${service.models.provider}, default model ${models["aimodel-2.0-flash-exp"].modelId})\n${running.banner.map((l) => `${l}\n`).join("")}`,
  );

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info("shutting down", {
      signal,
      openTurns: service.lifecycle.openTurns,
      graceMs: config.shutdownGraceMs,
    });
    const closed = closeServer(server);
    await service.shutdown();
    await closed;
    logger.info("stopped");
    process.exit(0);
  };
  // A stray rejection is a bug to log, not a reason to drop every open stream and payment.
  process.on("unhandledRejection", (error) => logger.error("unhandled rejection", { error: String(error) }));
  process.on("SIGTERM", () => void stop("SIGTERM"));
  process.on("SIGINT", () => void stop("SIGINT"));
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError) {
    process.stderr.write(`${error.message}\n`);
  } else {
    process.stderr.write(`Failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
  }
  process.exit(1);
});
