import { describe, expect, it } from "vitest";
import { defaultUsdc } from "../chains/index.js";
import { evmChainId, KNOWN_USDC, notUsdc } from "./usdc.js";

describe("the client's USDC table", () => {
  it("is the service's: the x402 SDK's USDC on every network it knows", () => {
    const sorted = (t: Readonly<Record<string, readonly string[]>>) =>
      Object.fromEntries(Object.entries(t).sort(([a], [b]) => a.localeCompare(b)));
    expect(sorted(KNOWN_USDC)).toEqual(sorted(defaultUsdc()));
  });

  it("names a token that is not a known network's USDC, and leaves an unknown network alone", () => {
    expect(notUsdc("eip155:8453", "0x833589fcd6edb6e08f4c7c32d4f71b54bda02913")).toBeUndefined();
    expect(notUsdc("eip155:8453", "0x036CbD53842c5426634e7929541eC2318f3dCF7e")).toMatch(/not USDC/);
    // Base58 is case-sensitive: a mint spelled in another case is another mint.
    expect(
      notUsdc("solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp", "epjfwdd5aufqssqem2qn1xzybapc8g4wegggkzwytdt1v"),
    ).toMatch(/not USDC/);
    expect(notUsdc("eip155:31337", "0x5FbDB2315678afecb367f032d93F642f64180aa3")).toBeUndefined();
    expect(notUsdc("toString", "x")).toBeUndefined();
  });

  it("reads an EVM network's chain id, and nothing else's", () => {
    expect(evmChainId("eip155:8453")).toBe(8453);
    expect(evmChainId("eip155:08453")).toBeUndefined();
    expect(evmChainId("solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp")).toBeUndefined();
    expect(evmChainId("eip155:8453 ")).toBeUndefined();
  });
});
