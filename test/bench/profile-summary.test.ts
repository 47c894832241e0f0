import { describe, expect, it } from "vitest";
import { packageOf, summarize } from "../../scripts/profile-summary.js";

/** A profile of three frames sampled at known times (µs): what `--cpu-prof` writes, shrunk. */
function profile() {
  const frame = (functionName: string, url: string) => ({ functionName, url, lineNumber: 0 });
  return {
    nodes: [
      { id: 1, callFrame: frame("(root)", "") },
      { id: 2, callFrame: frame("(idle)", "") },
      { id: 3, callFrame: frame("mod", "file:///app/node_modules/@noble/curves/esm/abstract/modular.js") },
      { id: 4, callFrame: frame("reserve", "file:///app/src/store/ledger.ts") },
    ],
    startTime: 1_000_000,
    endTime: 1_010_000,
    // Samples at 1.000, 1.002, 1.004, 1.006, 1.008 s; each counts until the next one.
    samples: [3, 3, 4, 2, 4],
    timeDeltas: [0, 2000, 2000, 2000, 2000],
  };
}

describe("the profile summary", () => {
  it("names the package a script belongs to", () => {
    expect(packageOf("file:///x/node_modules/@noble/curves/esm/a.js", "mod")).toBe("@noble/curves");
    expect(packageOf("file:///x/node_modules/viem/_esm/b.js", "f")).toBe("viem");
    expect(packageOf("file:///x/src/payments/run/run.ts", "f")).toBe("src/payments");
    expect(packageOf("node:internal/streams/readable", "f")).toBe("node:");
    expect(packageOf("", "(garbage collector)")).toBe("(garbage collector)");
  });

  it("credits self time to packages and functions, and counts idle apart", () => {
    const lines = summarize(profile(), 5).join("\n");
    // 5 samples: the first three and the fourth count 2 ms each, the last nothing (no next one).
    expect(lines).toContain("| @noble/curves | 4 |");
    expect(lines).toContain("| src/store | 2 |");
    expect(lines).toContain("busy 6 ms");
  });

  it("keeps only the samples inside a window", () => {
    const lines = summarize(profile(), 5, { start: 1_003_000, end: 1_007_000 }).join("\n");
    expect(lines).not.toContain("@noble/curves");
    expect(lines).toContain("| src/store | 2 |");
    expect(lines).toContain("wall 4 ms");
  });
});
