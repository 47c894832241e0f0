/**
 * `npm test`: the checks (`npm run check`: Biome, tsc, the page's tsc) and the three vitest
 * projects (unit, integration, e2e; vitest.config.ts), then the wall time. The checks run beside
 * the tests (their output is printed when they end, not interleaved); either failing fails the
 * run. Arguments go to vitest (e.g. `npm test -- --project unit`).
 */
import { spawn } from "node:child_process";

const started = performance.now();
const npm = process.platform === "win32" ? "npm.cmd" : "npm";
const npx = process.platform === "win32" ? "npx.cmd" : "npx";

function run(command, args, { buffered }) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: buffered ? ["ignore", "pipe", "pipe"] : "inherit" });
    let output = "";
    child.stdout?.on("data", (chunk) => {
      output += chunk;
    });
    child.stderr?.on("data", (chunk) => {
      output += chunk;
    });
    child.on("error", (error) => resolve({ code: 1, output: `${output}${error.message}\n` }));
    child.on("exit", (code, signal) => resolve({ code: code ?? (signal ? 1 : 0), output }));
  });
}

const check = run(npm, ["run", "--silent", "check"], { buffered: true });
const tests = await run(npx, ["vitest", "run", ...process.argv.slice(2)], { buffered: false });
const checked = await check;
process.stdout.write(`\n${checked.output}`);
if (checked.code !== 0) process.stdout.write("npm run check failed\n");
const seconds = ((performance.now() - started) / 1000).toFixed(1);
const ok = checked.code === 0 && tests.code === 0;
process.stdout.write(
  `npm test ${ok ? "passed" : "FAILED"} in ${seconds} s (check and the unit, integration, e2e projects)\n`,
);
process.exit(ok ? 0 : 1);
