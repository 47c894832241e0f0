import { describe, expect, it } from "vitest";
import { scaleLine } from "../../bench/scale-line.js";

describe("the baseline's scale line", () => {
  it("states throughput against the bare clients and the paid path's p50 against theirs", () => {
    const line = scaleLine({
      bareRate: 14.3,
      oneRate: 7.7,
      twoRate: 7.2,
      pipelineP50: 30.4,
      directP50: 27.8,
    });
    expect(line).toBe("scale: one instance 0.54x bare, two instances 0.50x bare, paid path 1.09x bare");
  });

  it("rounds to two decimals and keeps ratios above one", () => {
    const line = scaleLine({ bareRate: 3, oneRate: 4, twoRate: 8.005, pipelineP50: 1, directP50: 3 });
    expect(line).toBe("scale: one instance 1.33x bare, two instances 2.67x bare, paid path 0.33x bare");
  });

  it("says '-' for a ratio that was not measured instead of Infinity or NaN", () => {
    const line = scaleLine({ bareRate: 0, oneRate: 5, twoRate: 0, pipelineP50: Number.NaN, directP50: 20 });
    expect(line).toBe("scale: one instance - bare, two instances - bare, paid path - bare");
  });
});
