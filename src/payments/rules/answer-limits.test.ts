import { describe, expect, it } from "vitest";
import { answerLimits } from "./answer-limits.js";

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
});
