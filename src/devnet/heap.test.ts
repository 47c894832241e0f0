import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { boundHeapGrowth, DEVNET_HEAP_GROWING_PERCENT } from "./heap.js";

/**
 * A process that calls `boundHeapGrowth()` as the devnet does when it starts, then runs one full
 * collection with V8's `--trace-gc-verbose` on: V8 prints the growing factor it used for the new
 * heap limit ("Limit: old size: … KB, new limit: … KB (1.5)"). With `--heap-growing-percent` in
 * effect that factor is 1 + percent / 100 whatever the allocation rate or machine load; without it
 * V8 picks its own (up to 4.0). It prints what `boundHeapGrowth()` returned.
 */
const PROBE = `
import { setFlagsFromString } from "node:v8";
import { boundHeapGrowth } from "./src/devnet/heap.ts";
const bounded = boundHeapGrowth();
setFlagsFromString("--trace-gc-verbose");
globalThis.gc();
setFlagsFromString("--no-trace-gc-verbose");
console.log(JSON.stringify({ bounded }));
`;

/** The growing factors V8 used after the probe's full collection, and what the probe printed. */
async function probe(nodeFlags: string[] = []): Promise<{ bounded: boolean; factors: string[] }> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [...nodeFlags, "--expose-gc", "--import", "tsx", "--input-type=module", "-e", PROBE],
    { timeout: 30_000 },
  );
  const factors = [...stdout.matchAll(/\[HeapController\] Limit: .*\((\d+\.\d+)\)$/gm)].map(
    (m) => m[1] ?? "",
  );
  const result = stdout.trim().split("\n").at(-1) ?? "";
  return { ...(JSON.parse(result) as { bounded: boolean }), factors };
}

describe("the devnet's process keeps a bounded heap", () => {
  it("has V8 grow the heap by DEVNET_HEAP_GROWING_PERCENT past what is live", async () => {
    const { bounded, factors } = await probe();
    expect(bounded).toBe(true);
    expect(factors.length).toBeGreaterThan(0);
    for (const factor of factors) expect(factor).toBe((1 + DEVNET_HEAP_GROWING_PERCENT / 100).toFixed(1));
  }, 30_000);

  it("leaves a growth given on Node's command line in effect", async () => {
    const { bounded, factors } = await probe(["--heap-growing-percent=20"]);
    expect(bounded).toBe(false);
    expect(factors.length).toBeGreaterThan(0);
    for (const factor of factors) expect(factor).toBe("1.2");
  }, 30_000);

  it("recognizes either spelling of the flag on Node's command line", () => {
    expect(boundHeapGrowth(["--heap-growing-percent=20"])).toBe(false);
    expect(boundHeapGrowth(["--heap_growing_percent", "20"])).toBe(false);
  });
});
