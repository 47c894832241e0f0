import { describe, expect, it } from "vitest";
import { TOOL_NAMES } from "../../tools/contract.js";
import { noMatchReply, refusedQuoteReply, toolErrorReply, unreadableReply } from "./replies.js";

describe("failure replies claim only what is known", () => {
  it("never says nothing was paid when the pay step failed (its outcome is on the p: lines)", () => {
    for (const text of [toolErrorReply(TOOL_NAMES.pay, "internal"), unreadableReply(TOOL_NAMES.pay)]) {
      expect(text).not.toMatch(/nothing was paid/i);
      expect(text).toMatch(/payment updates/);
    }
  });

  it("says nothing was paid when a step that cannot spend failed", () => {
    expect(toolErrorReply(TOOL_NAMES.budget, "store down")).toMatch(/Nothing was paid/);
    expect(unreadableReply(TOOL_NAMES.quote)).toMatch(/Nothing was paid/);
  });
});

describe("no matching service", () => {
  it("says the directory could not be read when it could not, not that no service exists", () => {
    const down = noMatchReply({ services: [], errors: ["http://d.example: HTTP 503"] }, "crypto price");
    expect(down).toMatch(/couldn't read the service directory/);
    expect(down).not.toMatch(/couldn't find an x402 service/);
    expect(noMatchReply({ services: [], errors: [] }, "crypto price")).toMatch(
      /couldn't find an x402 service/,
    );
  });
});

describe("prices", () => {
  const service = { name: "Weather", url: "https://w.example/", method: "GET" } as never;
  const limits = { limitUsd: "1.00", remainingUsd: "1.00" };
  const quote = (offer: Record<string, string>) =>
    ({
      ok: true,
      url: "https://w.example/",
      paymentRequired: true,
      offers: [offer],
      chosen: null,
      refusal: { code: "payment_unavailable", message: "no acceptable offer" },
      limits: { perTransaction: limits, perRequest: limits, daily: limits },
    }) as never;
  const base = { scheme: "exact", network: "eip155:84532", payTo: "0xpayee", amountAtomic: "10000000" };

  it("states a USDC offer in dollars, and another asset's in its own units, never as dollars", () => {
    expect(refusedQuoteReply(service, quote({ ...base, asset: "0xusdc", amountUsd: "10.00" }))).toMatch(
      /It asks \$10(\.00)? on /,
    );
    const other = refusedQuoteReply(service, quote({ ...base, asset: "0xwrapped" }));
    expect(other).toMatch(/It asks 10000000 units of the token 0xwrapped \(not USDC\)/);
    expect(other).not.toMatch(/It asks \$/);
    const unreadable = refusedQuoteReply(
      service,
      quote({ ...base, asset: "0xusdc", amountAtomic: "-10000" }),
    );
    expect(unreadable).toMatch(/It asks an amount that is not a whole number of units \("-10000"\)/);
  });
});
