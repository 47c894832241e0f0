import { describe, expect, it } from "vitest";
import { explorerTxUrl } from "./explorer.js";

describe("a transaction's explorer page", () => {
  it("is the network's explorer, or none for a network without one", () => {
    expect(explorerTxUrl("eip155:8453", "0xab")).toBe("https://basescan.org/tx/0xab");
    expect(explorerTxUrl("solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1", "sig")).toBe(
      "https://explorer.solana.com/tx/sig?cluster=devnet",
    );
    expect(explorerTxUrl("eip155:31337", "0xab")).toBeUndefined();
  });

  it("is none for a network named as an object's own property", () => {
    for (const network of ["constructor", "toString", "__proto__"])
      expect(explorerTxUrl(network, "0xab"), network).toBeUndefined();
  });
});
