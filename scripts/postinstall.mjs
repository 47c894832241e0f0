/**
 * npm runs this after `npm install` (plain Node: it runs in a production install too). In a full
 * install it prepares what the first `npm start` would otherwise do itself, slowly, so that start
 * is as quick as later ones: the compiled service, dist/main.js (scripts/build.mjs), the PGlite
 * template a new data directory is copied from (src/store/template.ts), and the clients: the SDK
 * package with its type declarations and the terminal chat (scripts/build-client.mjs). All run at
 * once. The web page is not built here: `npm run build` builds it, and `npm start` when it is
 * missing (web/build.mjs). In a production install (`--omit=dev`: no tsx, no esbuild) it builds
 * nothing and says what the install will run. It never fails the install, and prints one line per
 * thing it could not prepare, never a tool's raw output: `npm start` still does what is missing.
 */
import { existsSync } from "node:fs";
import { canBuild, OUTFILE, staleness } from "./build.mjs";
import { nodeTooOld } from "./node-version.mjs";

const started = performance.now();
const note = (line) => process.stderr.write(`postinstall: ${line}\n`);
/** The first line of an error, without the output a tool printed after it. */
const reason = (error) => String(error instanceof Error ? error.message : error).split("\n")[0];

async function full() {
  const { register } = await import("tsx/esm/api");
  register();
  const [{ createPgliteTemplate }, { ensureBuilt }, { ensureClientBuilt }] = await Promise.all([
    import("../src/store/template.ts"),
    import("./build.mjs"),
    import("./build-client.mjs"),
  ]);
  const [built, template, clients] = await Promise.allSettled([
    ensureBuilt(note),
    createPgliteTemplate(),
    ensureClientBuilt({ types: true }),
  ]);
  if (built.status === "rejected")
    note(`dist/main.js not built (npm start will build it): ${reason(built.reason)}`);
  if (template.status === "rejected")
    note(`no PGlite template (a new database runs initdb): ${reason(template.reason)}`);
  if (clients.status === "rejected")
    note(`clients not built (npm run build:client builds them): ${reason(clients.reason)}`);
  note(`ready to start in ${Math.round(performance.now() - started)} ms`);
}

function production() {
  if (!existsSync(OUTFILE)) {
    note("installed without development dependencies and nothing is built: `npm start` needs dist/,");
    note("which `npm run build` makes in a full install (docs/deploy.md, Production install).");
    return;
  }
  const stale = staleness({ packages: false });
  note(
    stale
      ? `installed without development dependencies, and dist/main.js is out of date (${stale}): run \`npm run build\` in a full install`
      : "installed without development dependencies: `npm start` runs the build in dist/ (PAYMENTS=external or off)",
  );
}

const tooOld = nodeTooOld();
if (tooOld) note(`${tooOld}.`);
try {
  if (canBuild()) await full();
  else production();
} catch (error) {
  note(`nothing prepared (npm start will build what it needs): ${reason(error)}`);
}
