// Rewrites test/setup/durations.json (the order test files start in: test/setup/sequencer.ts) from
// a Vitest JSON report: `npx vitest run --reporter=json --outputFile=report.json`, then
// `node scripts/test-durations.mjs report.json`. Seconds per file, rounded to a tenth.
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";

const report = process.argv[2];
if (!report) {
  console.error("usage: node scripts/test-durations.mjs <vitest json report>");
  process.exit(2);
}
const { testResults } = JSON.parse(readFileSync(report, "utf8"));
const root = process.cwd();
const seconds = Object.fromEntries(
  testResults
    .map((t) => [path.relative(root, t.name).split(path.sep).join("/"), (t.endTime - t.startTime) / 1000])
    .sort((a, b) => b[1] - a[1])
    .map(([file, s]) => [file, Math.round(s * 10) / 10]),
);
writeFileSync("test/setup/durations.json", `${JSON.stringify(seconds, null, 2)}\n`);
console.log(`test/setup/durations.json: ${Object.keys(seconds).length} files`);
