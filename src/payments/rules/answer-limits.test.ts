import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { SpendingLimitsInput } from "../../protocol/request.js";
import { answerLimits } from "./answer-limits.js";
import { isNetworkAllowed, isServiceAllowed, type LimitsConfig, resolveLimits } from "./limits.js";

const server = { defaults: { perTransaction: 1_000_000n, perRequest: 2_000_000n, daily: 10_000_000n } };

// Found by a black-box run (h45): an approval answer's limits replaced those its payment was
// asked under, so three $0.01 payments asked under perRequest $0.015 all settled.
describe("the limits an approval answer is checked under", () => {
  it("are those it was asked under when the answer sends none (the page)", () => {
    const asked = { perRequest: 15_000n };
    expect(answerLimits(server, asked, undefined)).toBe(asked);
  });

  it("never wider than asked: each amount the smaller, a limit left out the server's default", () => {
    const asked = { perRequest: 15_000n, approvalAbove: 0n };
    const answer = { perRequest: 100_000_000n, daily: 500_000n, perTransaction: 99_000_000n };
    expect(answerLimits(server, asked, answer)).toEqual({
      perTransaction: 1_000_000n,
      perRequest: 15_000n,
      daily: 500_000n,
      approvalAbove: 0n,
    });
  });

  it("networks and services both allow, by origin; asked before limits were kept: the defaults", () => {
    const asked = {
      allowedNetworks: ["eip155:8453", "eip155:84532"],
      allowedServices: ["https://a.example/x"],
    };
    const answer = {
      allowedNetworks: ["eip155:84532", "eip155:1"],
      allowedServices: ["https://a.example", "https://b.example"],
    };
    expect(answerLimits(server, asked, answer)).toMatchObject({
      allowedNetworks: ["eip155:84532"],
      allowedServices: ["https://a.example/x"],
    });
    expect(answerLimits(server, undefined, { daily: 99_000_000n })).toMatchObject({ daily: 10_000_000n });
  });

  // A property (suggested by a review, h47): whatever either side sends, left out or empty.
  it("are never wider than those it was asked under, whatever the answer sends", () => {
    const full: LimitsConfig = {
      ...server,
      caps: { perTransaction: 100_000_000n, perRequest: 100_000_000n, daily: 1_000_000_000n },
      allowedNetworks: ["eip155:1", "eip155:2"],
      allowedServices: "any",
    };
    const amount = fc.bigInt({ min: 0n, max: 200_000_000n });
    const limits: fc.Arbitrary<SpendingLimitsInput | undefined> = fc.option(
      fc.record(
        {
          perTransaction: amount,
          perRequest: amount,
          daily: amount,
          approvalAbove: amount,
          allowedNetworks: fc.subarray(full.allowedNetworks),
          allowedServices: fc.subarray(["https://a.example", "https://b.example"]),
        },
        { requiredKeys: [] },
      ),
      { nil: undefined },
    );
    fc.assert(
      fc.property(limits, limits, (kept, answer) => {
        const before = resolveLimits(full, kept);
        const after = resolveLimits(full, answerLimits(full, kept, answer));
        for (const key of ["perTransaction", "perRequest", "daily"] as const)
          expect(after[key] <= before[key]).toBe(true);
        if (before.approvalAbove !== undefined)
          expect((after.approvalAbove ?? before.approvalAbove + 1n) <= before.approvalAbove).toBe(true);
        for (const network of full.allowedNetworks)
          if (isNetworkAllowed(network, after)) expect(isNetworkAllowed(network, before)).toBe(true);
        for (const url of ["https://a.example/x", "https://b.example/y"])
          if (isServiceAllowed(url, after)) expect(isServiceAllowed(url, before)).toBe(true);
      }),
    );
  });
});
