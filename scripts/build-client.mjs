/**
 * The compiled clients (git-ignored, built at `npm install` by scripts/postinstall.mjs and by
 * `npm run build`):
 *
 * - `packages/client/dist/index.js` and `dist/ai.js` (with their shared `chunk-*.js`): the SDK, the
 *   workspace package `@x402-chat-agent/client` (packages/client): `src/client/index.ts` (the root,
 *   no `ai`) and `src/client/ai.ts` (the subpath `/ai`, the `useChat` transport), bundled by esbuild, so the wire protocol has one definition (src/protocol) that the service and
 *   the package share. The parts of zod its schemas use (`zod/v4-mini`, tree-shaken) are bundled
 *   in, so zod is not a peer of the package; `ai` (types only) and `@solana/kit` (loaded when a
 *   Solana approval is signed) stay imports, left to the program. This package also exports them as
 *   `x402-chat-agent/client` and `x402-chat-agent/client/ai`.
 * - `packages/client/dist/types/`: its type declarations, emitted by tsc (`types` of both exports).
 * - `dist/cli/main.js`: the terminal chat (`src/cli/main.ts`), run by `bin/x402-chat-agent.mjs`.
 *
 * Never stale: `packages/client/dist/stamp.json` holds the content hash of every own source bundled
 * (and of this file and both package.json); `ensureClientBuilt()` rebuilds whenever one differs
 * (about 0.1 s: only our own files are compiled). Declarations are stamped apart (tsc takes
 * seconds), and only built when asked (`{ types: true }`, as at install, by `npm run build`, by
 * `node scripts/build-client.mjs` and by `npm pack` of the package).
 */
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { canBuild } from "./build.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const PACKAGE_DIST = join(root, "packages", "client", "dist");
export const CLIENT_OUTFILE = join(PACKAGE_DIST, "index.js");
/** The subpath `@x402-chat-agent/client/ai`: the `useChat` transport (it shares chunks with index.js). */
export const CLIENT_AI_OUTFILE = join(PACKAGE_DIST, "ai.js");
export const CLI_OUTFILE = join(root, "dist", "cli", "main.js");
export const TYPES_DIR = join(PACKAGE_DIST, "types");
const STAMP = join(PACKAGE_DIST, "stamp.json");
const TYPES_STAMP = join(PACKAGE_DIST, "types.stamp.json");
const CONFIG_INPUTS = ["package.json", "packages/client/package.json", "scripts/build-client.mjs"];
/**
 * The SDK runs anywhere (browsers too): it bundles zod's parts it uses and leaves `ai` and
 * `@solana/kit` to the installer; the terminal chat runs on Node and bundles its packages too
 * (viem's accounts, Solana kit, zod), so it runs in a production install, which has none of them
 * (docs/deploy.md).
 */
export const CLIENT_EXTERNAL = ["ai", "@solana/kit"];
const ENTRIES = [
  // Two entries split into shared chunks (`chunk-*.js`), so both subpaths hold one copy of each class.
  {
    outdir: PACKAGE_DIST,
    entries: { index: "src/client/index.ts", ai: "src/client/ai.ts" },
    platform: "neutral",
    external: CLIENT_EXTERNAL,
  },
  { outfile: CLI_OUTFILE, entries: ["src/cli/main.ts"], platform: "node", external: undefined },
];

const sha1 = (data) => createHash("sha1").update(data).digest("hex");

function hashOf(path) {
  try {
    return sha1(readFileSync(join(root, path)));
  } catch {
    return "missing";
  }
}

function readStamp(path) {
  try {
    return JSON.parse(readFileSync(path, "utf8"));
  } catch {
    return undefined;
  }
}

/**
 * Why the stamped outputs cannot be used as they are, or undefined when they are up to date.
 * `packages: false` leaves npm files out: a production install has not got the ones bundled.
 */
function staleness(stampPath, outputs, { packages = true } = {}) {
  const stamp = readStamp(stampPath);
  if (!stamp) return "not built yet";
  if (stamp.root !== root) return "built in another directory";
  for (const output of outputs) {
    try {
      readFileSync(output, { flag: "r" });
    } catch {
      return `${output} is missing`;
    }
  }
  for (const [path, expected] of Object.entries(stamp.inputs)) {
    if (!packages && path.startsWith("node_modules/")) continue;
    if (hashOf(path) !== expected) return `${path} changed`;
  }
  return undefined;
}

function writeAtomically(path, contents) {
  mkdirSync(join(path, ".."), { recursive: true });
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, contents);
  try {
    renameSync(temporary, path);
  } finally {
    rmSync(temporary, { force: true });
  }
}

async function loadEsbuild() {
  const fromTsx = createRequire(createRequire(import.meta.url).resolve("tsx/package.json"));
  return import(pathToFileURL(fromTsx.resolve("esbuild")).href);
}

/**
 * A source map keeps the text of our own sources only: npm packages bundled in (zod's parts, in the
 * SDK) are named, their lines mapped, but their text is left to their own packages (it would
 * double the client package's size).
 */
function withoutPackageSources(file) {
  if (!file.path.endsWith(".map")) return file.contents;
  const map = JSON.parse(file.text);
  map.sourcesContent = map.sourcesContent?.map((text, i) =>
    /node_modules\//.test(map.sources[i]) ? null : text,
  );
  return JSON.stringify(map);
}

/** Bundle the SDK and the terminal chat now; returns the inputs stamped. */
async function buildJs() {
  const esbuild = await loadEsbuild();
  const inputs = new Set(CONFIG_INPUTS);
  for (const { outfile, outdir, entries, platform, external } of ENTRIES) {
    const result = await esbuild.build({
      absWorkingDir: root,
      entryPoints: entries,
      ...(outdir ? { outdir, splitting: true, chunkNames: "chunk-[hash]" } : { outfile }),
      bundle: true,
      ...(external ? { external } : {}),
      // Bundled CommonJS modules require Node's built-in modules (as in scripts/build.mjs).
      ...(platform === "node"
        ? {
            banner: {
              js: 'import { createRequire as __createRequire } from "node:module"; const require = __createRequire(import.meta.url);',
            },
          }
        : {}),
      platform,
      format: "esm",
      target: "es2022",
      sourcemap: "linked",
      metafile: true,
      write: false,
      logLevel: "warning",
    });
    for (const path of Object.keys(result.metafile.inputs)) inputs.add(path);
    // The bundle before its map; the stamp after both.
    const files = [...result.outputFiles].sort(
      (a, b) => Number(a.path.endsWith(".map")) - Number(b.path.endsWith(".map")),
    );
    // Chunks of an earlier build are left out of the package.
    if (outdir) mkdirSync(outdir, { recursive: true });
    if (outdir)
      for (const name of readdirSync(outdir))
        if (/^chunk-.*\.js(\.map)?$/.test(name)) rmSync(join(outdir, name), { force: true });
    for (const file of files) writeAtomically(file.path, withoutPackageSources(file));
  }
  const hashes = Object.fromEntries([...inputs].sort().map((path) => [path, hashOf(path)]));
  writeAtomically(STAMP, `${JSON.stringify({ root, inputs: hashes }, null, 1)}\n`);
  return hashes;
}

/**
 * Emit the SDK's declarations with tsc: TypeScript 7, the native compiler, installed under the name
 * `typescript-native` (a development dependency: skipped, said, when absent).
 */
async function buildTypes(inputs) {
  const require = createRequire(import.meta.url);
  let tsc;
  try {
    // Its exports name no bin/tsc: found beside its package.json.
    tsc = join(dirname(require.resolve("typescript-native/package.json")), "bin", "tsc");
  } catch {
    throw new Error("typescript-native is not installed (a development dependency); no declarations");
  }
  rmSync(TYPES_DIR, { recursive: true, force: true });
  await promisify(execFile)(
    process.execPath,
    [
      tsc,
      "src/client/index.ts",
      "src/client/ai.ts",
      // The files are named here, not by tsconfig.json (TypeScript 7 refuses both unless told).
      "--ignoreConfig",
      "--declaration",
      "--emitDeclarationOnly",
      "--outDir",
      TYPES_DIR,
      "--rootDir",
      "src",
      "--module",
      "NodeNext",
      "--moduleResolution",
      "NodeNext",
      "--target",
      "ES2022",
      "--lib",
      "ES2024,DOM,DOM.Iterable",
      "--types",
      "node",
      "--strict",
      "--skipLibCheck",
      "--verbatimModuleSyntax",
      "--isolatedModules",
    ],
    { cwd: root },
  );
  writeAtomically(TYPES_STAMP, `${JSON.stringify({ root, inputs }, null, 1)}\n`);
}

/**
 * Build whatever is stale; `types: true` also the declarations. Returns what was built, for a log
 * line (empty when everything was up to date).
 */
export async function ensureClientBuilt({ types = false } = {}) {
  const built = [];
  // A production install cannot build (no esbuild): it uses the build it was given.
  const jsReason = staleness(STAMP, [CLIENT_OUTFILE, CLIENT_AI_OUTFILE, CLI_OUTFILE], {
    packages: canBuild(),
  });
  let inputs = readStamp(STAMP)?.inputs;
  if (jsReason) {
    inputs = await buildJs();
    built.push(`packages/client/dist and dist/cli (${jsReason})`);
  }
  if (types) {
    const typesReason = staleness(TYPES_STAMP, [
      join(TYPES_DIR, "client", "index.d.ts"),
      join(TYPES_DIR, "client", "ai.d.ts"),
    ]);
    const stamped = readStamp(TYPES_STAMP)?.inputs;
    if (typesReason || JSON.stringify(stamped) !== JSON.stringify(inputs)) {
      await buildTypes(inputs);
      built.push(`packages/client/dist/types (${typesReason ?? "sources changed"})`);
    }
  }
  return built;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const started = performance.now();
  const built = await ensureClientBuilt({ types: true });
  process.stderr.write(
    built.length > 0
      ? `built ${built.join(", ")} in ${Math.round(performance.now() - started)} ms\n`
      : "packages/client/dist, dist/cli and their types are up to date\n",
  );
}
