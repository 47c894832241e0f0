/**
 * Builds the web chat page into dist/web (git-ignored) with Vite, unless it is up to date:
 * `dist/web/.stamp.json` lists every source the last build read (the page's own files, and the
 * service's protocol and client modules it imports, by content hash) plus package-lock.json, and
 * `ensureWebBuilt()` builds again when any differs. `npm run build` and `npm start` run it
 * (scripts/build-all.mjs, src/start.mjs; not `npm install`); `npm run build:web` always builds; the
 * browser test builds what it tests.
 */
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
export const WEB_OUT_DIR = join(root, "dist", "web");
const STAMP = join(WEB_OUT_DIR, ".stamp.json");
const CONFIG_INPUTS = ["package-lock.json", "web/build.mjs", "web/vite.config.ts", "web/index.html"];

function fingerprint(path) {
  try {
    return createHash("sha1")
      .update(readFileSync(join(root, path)))
      .digest("hex");
  } catch {
    return "missing";
  }
}

/** Why dist/web cannot be served as it is, or undefined when it is up to date. */
export function webStaleness() {
  let stamp;
  try {
    stamp = JSON.parse(readFileSync(STAMP, "utf8"));
    readFileSync(join(WEB_OUT_DIR, "index.html"));
  } catch {
    return "not built yet";
  }
  for (const [path, expected] of Object.entries(stamp.inputs)) {
    if (fingerprint(path) !== expected) return `${path} changed`;
  }
  return undefined;
}

/** Build now (Vite, production) and write the stamp; returns how many sources went in. */
export async function buildWeb() {
  // A production build whatever the caller's NODE_ENV (vitest sets "test": React's development build).
  const callers = process.env.NODE_ENV;
  process.env.NODE_ENV = "production";
  let result;
  try {
    const { build } = await import("vite");
    result = await build({ configFile: join(root, "web", "vite.config.ts"), logLevel: "warn" });
  } finally {
    if (callers === undefined) delete process.env.NODE_ENV;
    else process.env.NODE_ENV = callers;
  }
  const outputs = Array.isArray(result) ? result : [result];
  const sources = new Set();
  for (const output of outputs) {
    for (const chunk of output.output ?? []) {
      for (const id of chunk.moduleIds ?? []) {
        const path = relative(root, id.split("?")[0]);
        if (!path.startsWith("..") && !path.includes("node_modules") && !id.startsWith("\0"))
          sources.add(path);
      }
    }
  }
  const inputs = {};
  for (const path of [...sources, ...CONFIG_INPUTS]) inputs[path] = fingerprint(path);
  writeFileSync(STAMP, `${JSON.stringify({ inputs }, null, 1)}\n`);
  return Object.keys(inputs).length;
}

/** Build unless dist/web is up to date; returns why it was built, or undefined. */
export async function ensureWebBuilt(log = () => {}) {
  const reason = webStaleness();
  if (!reason) return undefined;
  const started = performance.now();
  const count = await buildWeb();
  log(`built dist/web (${reason}) from ${count} files in ${Math.round(performance.now() - started)} ms`);
  return reason;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const log = (line) => process.stderr.write(`${line}\n`);
  if (process.argv.includes("--if-stale")) {
    if (!(await ensureWebBuilt(log))) log("dist/web is up to date");
  } else {
    const count = await buildWeb();
    log(`built dist/web from ${count} files`);
  }
}
