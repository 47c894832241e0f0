/**
 * The soak's core (scripts/soak.ts, `npm run soak`) for a few seconds: the service with its
 * embedded devnet, paid chat turns at a steady rate on both chains. What a user relies on: every
 * turn pays, and the ledger equals the chain. The soak itself (minutes, curves, verdict) is not a
 * test: timings are not asserted here.
 */
import { describe, expect, it } from "vitest";
import { runSoak } from "../scripts/soak.js";

describe("the soak, briefly", () => {
  it("pays every turn on both chains at a steady rate, and the ledger equals the chain", async () => {
    const result = await runSoak({
      durationMs: 3_000,
      rate: 2,
      chains: ["solana", "evm"],
      sampleMs: 1_000,
      warmupMs: 0,
      maxInFlight: 50,
    });
    // Where no Solana node loads (LiteSVM has no package for the platform), the soak pays on EVM alone.
    if (process.platform === "linux" && process.arch === "x64") expect(result.chains).toContain("solana");
    expect(result.failures).toEqual([]);
    expect(result.skipped).toBe(0);
    expect(result.mismatches).toEqual([]);
    expect(result.unclear).toBe(0);
    expect(result.turns).toBe(6);
    for (const chain of result.chains) expect(result.settled[chain], chain).toBe(6 / result.chains.length);
    const settled = result.chains.reduce((n, c) => n + (result.settled[c] ?? 0), 0);
    expect(settled).toBe(result.turns);
    // Both curves were sampled: payment times per interval and the process's memory.
    expect(result.samples.length).toBeGreaterThanOrEqual(2);
    expect(result.samples.every((s) => s.rssMb > 0 && s.heapMb > 0)).toBe(true);
  }, 20_000);
});
