/**
 * Preloaded before anything else (`node --import ./src/early-signals.mjs src/start.mjs`, see
 * package.json): from the first moment, a SIGTERM or SIGINT is remembered instead of killing the
 * process (exit 143) while Node starts, dist/main.js is built if needed, and the service loads.
 * src/main.ts honours it with a graceful stop and exit code 0, and handles every later signal itself.
 */
const EARLY_SIGNAL = Symbol.for("x402-chat-agent.early-signal");

for (const signal of ["SIGTERM", "SIGINT"]) {
  process.on(signal, () => {
    globalThis[EARLY_SIGNAL] ??= signal;
  });
}
