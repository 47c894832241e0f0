import { describe, expect, it } from "vitest";
import { type Requirement, sameOffer, sameTerms } from "./index.js";

/**
 * Whether an offer is still the one quoted or stored: network, token and payee compared as the
 * network's chain family compares addresses (EVM ignores hex case, Solana's base58 is exact).
 */

const EVM = "eip155:84532";
const SOLANA = "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1";
const EVM_PAYEE = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const SOL_PAYEE = "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM";
/** Another Solana account: the same letters, one of them in the other case. */
const SOL_OTHER = "9wzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM";

const evmOffer = (over: Partial<Requirement> = {}): Requirement => ({
  scheme: "exact",
  network: EVM,
  amount: "10000",
  asset: "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
  payTo: EVM_PAYEE,
  maxTimeoutSeconds: 60,
  ...over,
});
const solOffer = (over: Partial<Requirement> = {}): Requirement => ({
  scheme: "exact",
  network: SOLANA,
  amount: "10000",
  asset: "4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU",
  payTo: SOL_PAYEE,
  maxTimeoutSeconds: 60,
  ...over,
});

describe("the same payee", () => {
  it("on Solana, two payees that differ only in case are different: the offer changed", () => {
    expect(sameOffer(solOffer(), solOffer())).toBe(true);
    expect(sameOffer(solOffer(), solOffer({ payTo: SOL_OTHER }))).toBe(false);
    expect(sameTerms(solOffer(), solOffer({ payTo: SOL_OTHER }))).toBe(false);
  });

  it("on EVM, a checksummed and a lowercase address are the same payee (and token)", () => {
    const lower = evmOffer({ payTo: EVM_PAYEE.toLowerCase(), asset: evmOffer().asset.toLowerCase() });
    expect(sameOffer(evmOffer(), lower)).toBe(true);
    expect(sameTerms(evmOffer(), lower)).toBe(true);
    expect(sameOffer(evmOffer(), evmOffer({ payTo: "0x000000000000000000000000000000000000dEaD" }))).toBe(
      false,
    );
  });

  it("an offer is the same only with the same scheme, amount, network and token too", () => {
    expect(sameOffer(evmOffer(), evmOffer({ amount: "10001" }))).toBe(false);
    expect(sameOffer(evmOffer(), evmOffer({ scheme: "upto" }))).toBe(false);
    expect(sameOffer(evmOffer(), evmOffer({ network: "eip155:8453" }))).toBe(false);
    expect(sameOffer(evmOffer(), evmOffer({ asset: "0x0000000000000000000000000000000000000001" }))).toBe(
      false,
    );
    // Terms leave the amount to the price check: a quoted payment's terms are payee, network, token.
    expect(sameTerms(evmOffer(), evmOffer({ amount: "10001" }))).toBe(true);
  });
});
