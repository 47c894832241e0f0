import { describe, expect, it } from "vitest";
import {
  CHAIN_FAMILIES,
  defaultUsdc,
  familyOf,
  parseAddress,
  sameAsset,
  samePayee,
  v1Networks,
  walletCanUse,
} from "./index.js";

describe("the chain families, registered by CAIP-2 namespace", () => {
  it("finds a network's family by its namespace only", () => {
    expect(familyOf("eip155:8453")?.name).toBe("evm");
    expect(familyOf("solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1")?.name).toBe("solana");
    expect(familyOf("eip155")).toBeUndefined();
    expect(familyOf("cosmos:hub")).toBeUndefined();
    expect(walletCanUse("evm", "eip155:31337")).toBe(true);
    expect(walletCanUse("evm", "solana:x")).toBe(false);
  });

  it("parses each family's addresses into their canonical form, with a reason when invalid", () => {
    expect(parseAddress("0x70997970c51812dc3a010c7d01b50e0d17dc79c8")).toEqual({
      ok: true,
      chain: "evm",
      address: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
    });
    expect(parseAddress("0x70997970C51812dc3A010C7d01b50e0d17dc79c8")).toMatchObject({ ok: false });
    expect(parseAddress("9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM")).toMatchObject({
      ok: true,
      chain: "solana",
    });
    expect(parseAddress("nope")).toMatchObject({ ok: false });
  });

  it("takes USDC and v1 network names from the x402 SDK's own tables", () => {
    const usdc = defaultUsdc();
    expect(usdc["eip155:8453"]).toContain("0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913");
    expect(usdc["solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp"]).toContain(
      "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v",
    );
    // Permit2-only tokens are not USDC-like here: nothing this service could sign.
    for (const assets of Object.values(usdc)) expect(assets.length).toBeGreaterThan(0);
    expect(v1Networks()["base-sepolia"]).toBe("eip155:84532");
    expect(v1Networks()["solana-devnet"]).toBe("solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1");
  });

  it("compares assets as each family does", () => {
    expect(sameAsset("eip155:1", "0xABC", "0xabc")).toBe(true);
    expect(sameAsset("solana:x", "Abc", "abc")).toBe(false);
  });

  it("compares payees as each family does: EVM ignores checksum case, base58 is exact", () => {
    const checksummed = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
    expect(samePayee("eip155:8453", checksummed, checksummed.toLowerCase())).toBe(true);
    expect(samePayee("eip155:8453", checksummed, "0x70997970C51812dc3A010C7d01b50e0d17dc79C9")).toBe(false);
    // Two different Solana accounts whose addresses differ only in case.
    const devnet = "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1";
    const payee = "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM";
    expect(samePayee(devnet, payee, payee)).toBe(true);
    expect(samePayee(devnet, payee, "9wzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM")).toBe(false);
    expect(samePayee("cosmos:hub", "Abc", "abc")).toBe(false);
  });

  it("has one family per namespace and per name", () => {
    expect(new Set(CHAIN_FAMILIES.map((f) => f.namespace)).size).toBe(CHAIN_FAMILIES.length);
    expect(new Set(CHAIN_FAMILIES.map((f) => f.name)).size).toBe(CHAIN_FAMILIES.length);
  });
});
