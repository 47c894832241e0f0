/**
 * The compiled form of the service that `npm start` runs (src/start.mjs): src/main.ts and every
 * module it loads, TypeScript and npm packages alike, bundled by esbuild into one file,
 * `dist/main.js` (git-ignored). Loading one file instead of about 1,900 modules (viem alone is
 * 1,100) through the TypeScript loader is most of what makes start-up fast (docs/benchmarks.md,
 * Start-up).
 *
 * Never stale: `dist/main.stamp.json` lists every input of the bundle (each own source by content
 * hash; each npm file, and the package.json of its package, by size and modification time; plus
 * package.json, package-lock.json, tsconfig.json and this file); `ensureBuilt()` rebuilds whenever
 * one differs, and a build replaces dist/main.js atomically (a process that is starting never
 * reads half a file).
 *
 * `node scripts/build.mjs` builds if needed (npm's `postinstall` runs it); `--force` always builds.
 */
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join, relative } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const ENTRY = "src/main.ts";
export const OUTFILE = join(root, "dist", "main.js");
const STAMP = join(root, "dist", "main.stamp.json");
/** Inputs esbuild does not list, but which change what it produces (with each package's package.json). */
const CONFIG_INPUTS = ["package.json", "package-lock.json", "tsconfig.json", "scripts/build.mjs"];

/**
 * Left to Node at run time: packages that find files next to their own modules (PGlite its
 * WebAssembly and data files, pino its worker files), native addons, and those only loaded by
 * path through `createRequire` (Hardhat, LiteSVM) or never at run time (solc).
 */
const EXTERNAL = [
  "@electric-sql/pglite",
  "@electric-sql/pglite/*",
  "pino",
  "bufferutil",
  "utf-8-validate",
  "hardhat",
  "hardhat/*",
  "litesvm-*",
  "solc",
];

const sha1 = (data) => createHash("sha1").update(data).digest("hex");

/** What an input is now: own files by content, npm files by size and time (2,000 stats are cheap). */
function fingerprint(path) {
  try {
    if (path.startsWith("node_modules/")) {
      const stat = statSync(join(root, path));
      return `${stat.size}:${stat.mtimeMs}`;
    }
    return sha1(readFileSync(join(root, path)));
  } catch {
    return "missing";
  }
}

/**
 * Whether this install can build: esbuild comes with tsx, a development dependency. A production
 * install (`npm ci --omit=dev` after `npm run build`, docs/deploy.md) cannot, and runs the build
 * it was given.
 */
export function canBuild() {
  try {
    createRequire(import.meta.url).resolve("tsx/package.json");
    return true;
  } catch {
    return false;
  }
}

/**
 * Why dist/main.js cannot be run as it is, or undefined when it is up to date. `packages: false`
 * leaves npm files out of the comparison: in a production install the development packages the
 * bundle holds (the devnet's sellers, say) are gone from node_modules but not from the bundle.
 */
export function staleness({ packages = true } = {}) {
  let stamp;
  try {
    stamp = JSON.parse(readFileSync(STAMP, "utf8"));
    statSync(OUTFILE);
  } catch {
    return "not built yet";
  }
  if (stamp.root !== root) return "built in another directory";
  for (const [path, expected] of Object.entries(stamp.inputs)) {
    if (!packages && path.startsWith("node_modules/")) continue;
    if (fingerprint(path) !== expected) return `${path} changed`;
  }
  return undefined;
}

/** The esbuild that tsx (a dependency) brings. */
async function loadEsbuild() {
  const fromTsx = createRequire(createRequire(import.meta.url).resolve("tsx/package.json"));
  return import(pathToFileURL(fromTsx.resolve("esbuild")).href);
}

/**
 * In a bundle, `import.meta.url` would be the bundle's and `__dirname` undefined. Each module
 * keeps its own (under tsx, a source's is that source file), so paths relative to a module hold:
 * the contract artifacts, createRequire, a package reading its own package.json. Our sources are
 * hashed as they are read (`hashes`): a file edited while the build runs makes the next start
 * build again, never a stamp that vouches for what the bundle does not hold.
 */
const ownLocation = (hashes) => ({
  name: "own-location",
  setup(build) {
    build.onLoad({ filter: /\.ts$/ }, async (args) => {
      if (args.path.includes("/node_modules/")) return undefined;
      const text = await readFile(args.path, "utf8");
      hashes.set(relative(root, args.path), sha1(text));
      return {
        contents: text.replaceAll("import.meta.url", JSON.stringify(pathToFileURL(args.path).href)),
        loader: "ts",
      };
    });
    build.onLoad({ filter: /\/node_modules\/.*\.c?js$/ }, async (args) => {
      const text = await readFile(args.path, "utf8");
      if (!/\b__(dirname|filename)\b/.test(text)) return undefined;
      const wrapped = `var __filename = ${JSON.stringify(args.path)}, __dirname = ${JSON.stringify(dirname(args.path))};\n${text}`;
      return { contents: wrapped, loader: "js" };
    });
  },
});

const BASE64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const DIGIT = Object.fromEntries([...BASE64].map((c, i) => [c, i]));

function decodeSegment(text) {
  const values = [];
  let value = 0;
  let shift = 0;
  for (const char of text) {
    const digit = DIGIT[char];
    value += (digit & 31) << shift;
    if (digit & 32) shift += 5;
    else {
      values.push(value & 1 ? -(value >>> 1) : value >>> 1);
      value = 0;
      shift = 0;
    }
  }
  return values;
}

function encodeSegment(values) {
  let text = "";
  for (const v of values) {
    let rest = v < 0 ? (-v << 1) | 1 : v << 1;
    do {
      let digit = rest & 31;
      rest >>>= 5;
      if (rest > 0) digit |= 32;
      text += BASE64[digit];
    } while (rest > 0);
  }
  return text;
}

/**
 * The source map of our own sources only. Node decodes a map whole when the bundle loads
 * (about 0.8 s for all 1,900 modules here); ours is a small part of it. Code from npm packages is
 * left unmapped (stack frames there name dist/main.js, as they named node_modules before).
 */
export function ownSourceMap(map) {
  const keep = map.sources.map((source) => !source.includes("node_modules/"));
  const sources = map.sources.filter((_, i) => keep[i]);
  const newIndex = [];
  keep.reduce((next, kept, i) => {
    newIndex[i] = kept ? next : -1;
    return kept ? next + 1 : next;
  }, 0);
  // Absolute values as decoding goes: source, line, column, name (all relative in the format).
  const state = [0, 0, 0, 0];
  const out = [0, 0, 0, 0]; // the same, as last written
  let mapped = false; // whether the last segment written maps to a source
  const lines = map.mappings.split(";").map((line) => {
    let column = 0;
    let written = 0;
    const segments = [];
    for (const text of line ? line.split(",") : []) {
      const values = decodeSegment(text);
      column += values[0];
      for (let i = 1; i < values.length; i++) state[i - 1] += values[i];
      const own = values.length > 1 && newIndex[state[0]] >= 0;
      if (own) {
        const next = [newIndex[state[0]], state[1], state[2], ...(values.length > 4 ? [state[3]] : [])];
        segments.push(encodeSegment([column - written, ...next.map((v, i) => v - out[i])]));
        next.forEach((v, i) => {
          out[i] = v;
        });
        written = column;
        mapped = true;
      } else if (mapped) {
        // Ends the mapped range (Node takes the nearest segment before a position, lines included).
        segments.push(encodeSegment([column - written]));
        written = column;
        mapped = false;
      }
    }
    return segments.join(",");
  });
  return { version: 3, sources, names: map.names, mappings: `${lines.join(";")};` };
}

/** Whether the x402 v1 seller package (a development dependency) is installed to bundle. */
function installed(name) {
  try {
    createRequire(join(root, "package.json")).resolve(name);
    return true;
  } catch {
    return false;
  }
}

/** Bundle now and replace dist/main.js and its stamp. */
export async function build() {
  const esbuild = await loadEsbuild();
  const hashes = new Map();
  const result = await esbuild.build({
    absWorkingDir: root,
    entryPoints: [ENTRY],
    outfile: OUTFILE,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node22",
    // Dynamic imports stay lazy but live in the same file: no chunk can go missing under a
    // running process when the next build replaces the file.
    splitting: false,
    sourcemap: "linked",
    sourcesContent: false,
    // Without the v1 package the devnet starts without v1 sellers, as it does from source.
    external: [...EXTERNAL, ...(installed("x402-hono") ? [] : ["x402-hono"])],
    // Bundled CommonJS modules require Node's built-in modules.
    banner: {
      js: 'import { createRequire as __createRequire } from "node:module"; const require = __createRequire(import.meta.url);',
    },
    plugins: [ownLocation(hashes)],
    metafile: true,
    write: false,
    logLevel: "warning",
  });
  const files = Object.keys(result.metafile.inputs).filter((path) => !/^[a-z-]*:|^\(/.test(path)); // no virtual modules
  // An upgraded package rewrites its package.json, even where the files bundled stay the same.
  const manifests = files.flatMap((path) => {
    const match = /^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(path);
    return match ? [`${match[1]}/package.json`] : [];
  });
  const inputs = {};
  for (const path of [...files, ...new Set(manifests), ...CONFIG_INPUTS]) {
    inputs[path] = hashes.get(path) ?? fingerprint(path);
  }
  mkdirSync(join(root, "dist"), { recursive: true });
  const suffix = `.${process.pid}.tmp`;
  // The bundle first, then its map, then the stamp: a stamp never vouches for an older bundle.
  const outputs = [...result.outputFiles].sort(
    (a, b) => Number(a.path.endsWith(".map")) - Number(b.path.endsWith(".map")),
  );
  for (const file of outputs) {
    const contents = file.path.endsWith(".map")
      ? JSON.stringify(ownSourceMap(JSON.parse(file.text)))
      : file.contents;
    writeFileSync(file.path + suffix, contents);
  }
  writeFileSync(STAMP + suffix, `${JSON.stringify({ root, inputs }, null, 1)}\n`);
  try {
    for (const file of outputs) renameSync(file.path + suffix, file.path);
    renameSync(STAMP + suffix, STAMP);
  } finally {
    for (const path of [...outputs.map((f) => f.path), STAMP]) rmSync(path + suffix, { force: true });
  }
  return Object.keys(inputs).length;
}

/** Build unless dist/main.js is up to date; returns why it was built, or undefined. */
export async function ensureBuilt(log = () => {}) {
  const reason = staleness();
  if (!reason) return undefined;
  const started = performance.now();
  const count = await build();
  log(
    `built ${relative(process.cwd(), OUTFILE)} (${reason}) from ${count} files in ${Math.round(performance.now() - started)} ms`,
  );
  return reason;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const log = (line) => process.stderr.write(`${line}\n`);
  if (process.argv.includes("--force")) {
    await build();
    log(`built ${relative(process.cwd(), OUTFILE)}`);
  } else if (!(await ensureBuilt(log))) {
    log(`${relative(process.cwd(), OUTFILE)} is up to date`);
  }
}
