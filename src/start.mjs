/**
 * What `npm start` runs, after src/early-signals.mjs: the service compiled into one file,
 * dist/main.js (scripts/build.mjs), built first when it is missing or any of its sources changed,
 * so a stale build is never run. `npm install` builds it already (postinstall). Loading that one
 * file takes a fraction of loading src/main.ts's 1,900 modules through tsx (docs/benchmarks.md,
 * Start-up). Errors still point at the TypeScript sources (source maps).
 *
 * Should the build fail (a read-only checkout, say), the service runs from source through tsx,
 * as it always could. Run it with Node itself, as package.json does (see src/main.ts on signals).
 */
import { pathToFileURL } from "node:url";
import { ensureBuilt, OUTFILE } from "../scripts/build.mjs";

const note = (line) => process.stderr.write(`${line}\n`);

let entry = pathToFileURL(OUTFILE).href;
try {
  await ensureBuilt(note);
} catch (error) {
  if (!globalThis[Symbol.for("x402-chat-agent.early-signal")]) {
    note(
      `cannot build dist/main.js (${error instanceof Error ? error.message : error}); running from source`,
    );
    const { register } = await import("tsx/esm/api");
    register();
    entry = new URL("./main.ts", import.meta.url).href;
  }
}
// Stack traces name src/*.ts lines (dist/main.js.map maps our sources only: see scripts/build.mjs).
process.setSourceMapsEnabled(true);
// main.ts honours a SIGTERM or SIGINT that came meanwhile (src/early-signals.mjs) with exit code 0.
await import(entry);
