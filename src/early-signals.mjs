/**
 * Preloaded before the TypeScript loader (`node --import ./src/early-signals.mjs --import tsx
 * src/main.ts`, see package.json): from the first moment, a SIGTERM or SIGINT is remembered instead
 * of killing the process (exit 143) while Node and the loader start. src/main.ts honours it with a
 * graceful stop and exit code 0, and handles every later signal itself.
 */
const EARLY_SIGNAL = Symbol.for("x402-chat-agent.early-signal");

for (const signal of ["SIGTERM", "SIGINT"]) {
  process.on(signal, () => {
    globalThis[EARLY_SIGNAL] ??= signal;
  });
}
