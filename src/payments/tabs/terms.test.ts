import { describe, expect, it } from "vitest";
import { tabTerms } from "./terms.js";

const NETWORK = "eip155:31337";
const config = {
  // Base's USDC is among the payments' assets by default, but no RPC URL names Base here.
  assets: {
    "eip155:8453": ["0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"],
    [NETWORK]: ["0x5FbDB2315678afecb367f032d93F642f64180aa3"],
  },
  rpcUrls: { [NETWORK]: "http://127.0.0.1:8545" },
  maxAmount: 10_000_000n,
  defaultSeconds: 3600,
  maxSeconds: 86_400,
};
const wallet = { chain: "evm" as const, address: "0x976EA74026E726554dB657fA54763abd0C3a0aa9" };

describe("a tab's terms", () => {
  // Found by a black-box run: the first network with an asset was Base, with no RPC URL: a 500.
  it("are on a network the service reaches: the first with an RPC URL, another refused 400", () => {
    expect(tabTerms(config, { wallet, amount: 1n }).network).toBe(NETWORK);
    expect(() => tabTerms(config, { wallet, amount: 1n, network: "eip155:8453" })).toThrow(
      expect.objectContaining({ code: "tab_unsupported", details: { networks: [NETWORK] } }),
    );
  });

  it("take the default time, or the time asked within the longest", () => {
    expect(tabTerms(config, { wallet, amount: 1n })).toMatchObject({ network: NETWORK, seconds: 3600 });
    expect(tabTerms(config, { wallet, amount: 1n, seconds: 86_400 }).seconds).toBe(86_400);
  });

  // Found by fuzzing: 1,000,000 s was cut to a day without a word, while 10 s was refused.
  it("refuse a time past the longest, as a larger amount is refused, never cut short", () => {
    expect(() => tabTerms(config, { wallet, amount: 1n, seconds: 1_000_000 })).toThrow(
      expect.objectContaining({ code: "tab_invalid", details: { maxSeconds: 86_400 } }),
    );
    expect(() => tabTerms(config, { wallet, amount: 10_000_001n })).toThrow(
      expect.objectContaining({ code: "tab_invalid" }),
    );
  });
});
