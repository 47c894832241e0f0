import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { boundHeapGrowth } from "./heap.js";

/**
 * A process that keeps about 100 MB live and churns through short- and medium-lived objects, as
 * the devnet's process does under load; it prints the largest heap V8 reserved (MB).
 */
const CHURN = (bound: boolean) => `
import { getHeapStatistics } from "node:v8";
${bound ? 'import { boundHeapGrowth } from "./src/devnet/heap.ts";\nboundHeapGrowth();' : ""}
const live = [];
for (let i = 0; i < 50_000; i++) live.push("x".repeat(2000) + i);
let kept = [];
let peak = 0;
for (let round = 0; round < 1000; round++) {
  for (let i = 0; i < 1000; i++) kept.push(new Array(50).fill(round));
  if (kept.length > 200_000) kept = [];
  peak = Math.max(peak, getHeapStatistics().total_heap_size);
}
console.log(Math.round(peak / 1048576), live.length);
`;

async function peakHeapMb(bound: boolean): Promise<number> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ["--import", "tsx", "--input-type=module", "-e", CHURN(bound)],
    { timeout: 60_000 },
  );
  return Number(stdout.trim().split(" ")[0]);
}

describe("the devnet's process keeps a bounded heap", () => {
  it("reserves well under what V8 would on its own for the same load", async () => {
    const [bounded, own] = await Promise.all([peakHeapMb(true), peakHeapMb(false)]);
    // About 100 MB live plus up to 90 MB of medium-lived arrays: V8 on its own reserves 300-400 MB
    // here, bounded about 185.
    expect(own).toBeGreaterThan(260);
    expect(bounded).toBeLessThan(240);
  }, 60_000);

  it("leaves a growth given on Node's command line alone", () => {
    expect(boundHeapGrowth(["--heap-growing-percent=20"])).toBe(false);
    expect(boundHeapGrowth(["--heap_growing_percent", "20"])).toBe(false);
  });
});
