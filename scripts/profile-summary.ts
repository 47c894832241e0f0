/**
 * `npx tsx scripts/profile-summary.ts FILE.cpuprofile [--top=N] [--window=OTHER.cpuprofile]`: where a
 * CPU profile's time went (only while OTHER was recording, with `--window`),
 * as self time by package (an npm package, `node:` internals, our `src/` folder, or V8's idle,
 * program and garbage collector) and by function. Written for the benchmarks' `--profile=DIR`
 * (docs/benchmarks.md); works on any `--cpu-prof` output.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}
interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples?: number[];
  timeDeltas?: number[];
}

/**
 * A bundle's modules by first line: esbuild heads each module with a `// node_modules/...` or
 * `// src/...` comment, so a sample in dist/main.js is credited to the package it came from.
 */
const bundles = new Map<string, Array<[number, string]>>();
function moduleAt(url: string, line: number): string | undefined {
  if (!url.endsWith("/dist/main.js")) return undefined;
  let starts = bundles.get(url);
  if (!starts) {
    starts = [];
    try {
      const lines = readFileSync(fileURLToPath(url), "utf8").split("\n");
      lines.forEach((text, i) => {
        const m = /^\/\/ ((?:node_modules|src)\/\S+)$/.exec(text);
        if (m?.[1]) starts?.push([i, m[1]]);
      });
    } catch {
      // The bundle changed or is gone: credit the bundle as a whole.
    }
    bundles.set(url, starts);
  }
  let lo = 0;
  let hi = starts.length - 1;
  let found: string | undefined;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const [start, name] = starts[mid] as [number, string];
    if (start <= line) {
      found = name;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found;
}

/** The package a script belongs to: `pkg` under node_modules, `src/folder`, `node:` or V8's own. */
export function packageOf(url: string, functionName: string): string {
  if (!url) return functionName.startsWith("(") ? functionName : "(native)";
  if (url.startsWith("node:")) return "node:";
  const nm = url.lastIndexOf("/node_modules/");
  if (nm >= 0) {
    const parts = url.slice(nm + 14).split("/");
    return parts[0]?.startsWith("@") ? `${parts[0]}/${parts[1]}` : (parts[0] ?? url);
  }
  const src = /\/(src|bench|scripts)\/([^/]+)\//.exec(url) ?? /\/(src|bench|scripts)\/([^/]+)$/.exec(url);
  if (src) return `${src[1]}/${src[2]}`;
  if (url.includes("/dist/")) return "dist (bundled; see the source map)";
  return url.replace(/^.*\//, "");
}

/** A span of the monotonic clock, in µs, as profiles stamp it (the same in every process). */
export interface Window {
  start: number;
  end: number;
}

/** Self time in ms per node id, from the samples (within `window`) and their time deltas. */
function selfTimes(profile: Profile, window?: Window): Map<number, number> {
  const self = new Map<number, number>();
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  let at = profile.startTime;
  for (let i = 0; i < samples.length; i++) {
    at += deltas[i] ?? 0;
    if (window && (at < window.start || at > window.end)) continue;
    const id = samples[i] as number;
    // A sample's time is the gap to the next one.
    const dt = (deltas[i + 1] ?? 0) / 1000;
    self.set(id, (self.get(id) ?? 0) + dt);
  }
  return self;
}

/** Where the time went, within `window` when given (e.g. another profile's span: `--window=`). */
export function summarize(profile: Profile, top = 25, window?: Window): string[] {
  const self = selfTimes(profile, window);
  const byPackage = new Map<string, number>();
  const byFunction = new Map<string, number>();
  let total = 0;
  for (const node of profile.nodes) {
    const ms = self.get(node.id) ?? 0;
    if (ms === 0) continue;
    total += ms;
    const { functionName, lineNumber } = node.callFrame;
    const bundled = moduleAt(node.callFrame.url, lineNumber);
    const url = bundled ? `file:///${bundled}` : node.callFrame.url;
    const pkg = packageOf(bundled ? `/${bundled}` : url, functionName);
    byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + ms);
    const where = bundled
      ? bundled
      : url
        ? `${url.replace(/^.*\/(node_modules|src|bench|scripts)\//, "$1/")}:${lineNumber + 1}`
        : "";
    const key = `${functionName || "(anonymous)"} ${where}`.trim();
    byFunction.set(key, (byFunction.get(key) ?? 0) + ms);
  }
  const span = window ?? { start: profile.startTime, end: profile.endTime };
  const wall = (Math.min(span.end, profile.endTime) - Math.max(span.start, profile.startTime)) / 1000;
  const idle = byPackage.get("(idle)") ?? 0;
  const rows = (m: Map<string, number>) =>
    [...m.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([k, ms]) => `| ${k} | ${ms.toFixed(0)} | ${((ms / total) * 100).toFixed(1)} % |`);
  return [
    `wall ${wall.toFixed(0)} ms, busy ${(total - idle).toFixed(0)} ms (${(((total - idle) / wall) * 100).toFixed(0)} % of one core)`,
    "",
    "| package | self ms | share |",
    "|---|---|---|",
    ...rows(byPackage),
    "",
    "| function | self ms | share |",
    "|---|---|---|",
    ...rows(byFunction),
  ];
}

if (process.argv[1]?.endsWith("profile-summary.ts")) {
  const file = process.argv[2];
  const topArg = process.argv.find((a) => a.startsWith("--top="))?.slice(6);
  if (!file) {
    process.stderr.write("usage: npx tsx scripts/profile-summary.ts FILE.cpuprofile [--top=N]\n");
    process.exit(2);
  }
  const profile = JSON.parse(readFileSync(file, "utf8")) as Profile;
  // --window=OTHER.cpuprofile: only the samples taken while OTHER was recording.
  const windowFile = process.argv.find((a) => a.startsWith("--window="))?.slice(9);
  const other = windowFile ? (JSON.parse(readFileSync(windowFile, "utf8")) as Profile) : undefined;
  const window = other ? { start: other.startTime, end: other.endTime } : undefined;
  process.stdout.write(`${summarize(profile, Number(topArg ?? 25), window).join("\n")}\n`);
}
