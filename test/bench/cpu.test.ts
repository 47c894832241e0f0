import { describe, expect, it } from "vitest";
import { cpuLine, cpuSnapshot } from "../../bench/cpu.js";

describe("CPU per payment", () => {
  it("divides each part's CPU over the window by the payments, and says how busy the cores were", () => {
    const before = { ms: { devnet: 1_000, instances: 500 }, machine: { busy: 10_000, total: 40_000 } };
    const after = { ms: { devnet: 3_000, instances: 1_500 }, machine: { busy: 13_000, total: 44_000 } };
    expect(cpuLine(before, after, 100, 2)).toBe(
      "CPU ms per payment: devnet 20.0, instances 10.0; the machine's 2 cores 75 % busy",
    );
  });

  it("reads this process's main thread apart from the whole process on Linux", () => {
    const snap = cpuSnapshot([]);
    if (process.platform !== "linux") return;
    expect(snap.machine.total).toBeGreaterThan(0);
    expect(snap.ms["devnet (bench main thread)"]).toBeGreaterThan(0);
    expect(snap.ms["load worker and the bench's other threads"]).toBeGreaterThanOrEqual(0);
  });
});
