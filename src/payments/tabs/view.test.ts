import { describe, expect, it } from "vitest";
import { fundingWords } from "./view.js";

const ENDS = new Date("2026-11-30T12:00:00Z");

describe("fundingWords", () => {
  it("names the amount, the service, the network and the end", () => {
    const words = fundingWords("https://pay.example.com", 50_000n, "eip155:8453", ENDS);
    expect(words).toMatch(/^Open a tab of \$0\.05 with https:\/\/pay\.example\.com on Base: /);
    expect(words).toContain("12:00");
    expect(words).not.toContain("SOL"); // an EVM tab's funding is gasless for the wallet
  });

  // Found by a review: a Solana funding also costs SOL (its fee, and rent it lends), which the
  // words did not say, though the user must see every cost before signing.
  it("says what SOL a Solana funding costs and lends", () => {
    const words = fundingWords(
      "https://pay.example.com",
      50_000n,
      "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp",
      ENDS,
    );
    expect(words).toContain("on Solana");
    expect(words).toContain("two network fees of 0.000005 SOL");
    expect(words).toContain("about 0.003 SOL of rent, which returns when the tab closes");
  });
});
