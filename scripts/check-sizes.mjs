// The size rule (docs/architecture.md, "Sizes"): no product file over 300 lines and no function over
// 80. Product files are src/**, web/src/** and bin/** without tests (*.test.ts) and test support
// (testing/ folders). Run by `npm run check`. This script counts the files' lines; the functions'
// are Biome's `noExcessiveLinesPerFunction` (biome.json, the override for the same files). Nothing
// is over today; KNOWN once listed the debt (each with its size, allowed to shrink, never to grow)
// and stays for a file that must be let in with a reason, which then goes beside its entry.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";

const MAX_FILE_LINES = 300;
const ROOTS = ["src", "web/src", "bin"];

/** Known debt, by file (lines): files allowed over the limit for now; none today. */
const KNOWN = {};

function productFiles(dir, out = []) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const file = path.posix.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== "testing" && entry.name !== "node_modules") productFiles(file, out);
    } else if (/\.(ts|tsx|mjs)$/.test(entry.name) && !/\.test\.tsx?$/.test(entry.name)) out.push(file);
  }
  return out;
}

const problems = [];
const seen = new Set();
for (const file of ROOTS.flatMap((root) => productFiles(root))) {
  const text = readFileSync(file, "utf8");
  const lines = text.split("\n").length - (text.endsWith("\n") ? 1 : 0);
  const check = (key, size, max, what) => {
    if (size <= max) return;
    seen.add(key);
    const known = KNOWN[key];
    if (known === undefined) problems.push(`${key}: ${what} has ${size} lines (at most ${max})`);
    else if (size > known)
      problems.push(`${key}: ${what} grew to ${size} lines (known debt: ${known}, at most ${max})`);
  };
  check(file, lines, MAX_FILE_LINES, "the file");
}
for (const key of Object.keys(KNOWN)) {
  if (!seen.has(key))
    problems.push(`${key}: within the limit now: remove it from KNOWN in scripts/check-sizes.mjs`);
}
if (problems.length > 0) {
  console.error(`Size rule (${MAX_FILE_LINES} lines a file; functions: Biome):\n  ${problems.join("\n  ")}`);
  process.exit(1);
}
