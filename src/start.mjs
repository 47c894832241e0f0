/**
 * What `npm start` runs, after src/early-signals.mjs: the service compiled into one file,
 * dist/main.js (scripts/build.mjs), built first when it is missing or any of its sources changed,
 * so a stale build is never run; the web page (dist/web, web/build.mjs) likewise. `npm install`
 * builds the service already (postinstall), `npm run build` everything. Loading that one file
 * takes a fraction of loading src/main.ts's 1,900 modules through tsx (docs/benchmarks.md,
 * Start-up). Errors still point at the TypeScript sources (source maps).
 *
 * Should the build fail (a read-only checkout, say), the service runs from source through tsx,
 * as it always could. A production install (no development dependencies: no esbuild, no tsx, no
 * Vite; docs/deploy.md) builds nothing: it runs the build it was given, or says what to do.
 * Run it with Node itself, as package.json does (see src/main.ts on signals).
 */
import { pathToFileURL } from "node:url";
import { canBuild, ensureBuilt, OUTFILE, staleness } from "../scripts/build.mjs";
import { nodeTooOld } from "../scripts/node-version.mjs";

const note = (line) => process.stderr.write(`${line}\n`);

// Node 22.12 or newer, one line saying why otherwise (docs/deploy.md#node).
const tooOld = nodeTooOld();
if (tooOld) {
  note(`x402-chat-agent cannot start: ${tooOld}.`);
  process.exit(1);
}

let entry = pathToFileURL(OUTFILE).href;
if (!canBuild()) {
  const reason = staleness({ packages: false });
  if (reason) {
    note(
      `dist/main.js cannot be run (${reason}) and this install cannot build it: it has no development ` +
        "dependencies. Run `npm run build` in a full install first, then `npm prune --omit=dev` (docs/deploy.md).",
    );
    process.exit(1);
  }
} else {
  const { ensureWebBuilt } = await import("../web/build.mjs");
  const [server, web] = await Promise.allSettled([ensureBuilt(note), ensureWebBuilt(note)]);
  if (web.status === "rejected")
    note(
      `the web page is not built (${web.reason instanceof Error ? web.reason.message : web.reason}); / says so`,
    );
  if (server.status === "rejected" && !globalThis[Symbol.for("x402-chat-agent.early-signal")]) {
    const error = server.reason;
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
