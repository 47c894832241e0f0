import { describe, expect, it } from "vitest";
import { AppError } from "../errors/index.js";
import { parseChatRequest, parsePayerConfig } from "./request.js";
import { type WalletCheck, walletSyntax } from "./wallet.js";

const EVM = "0x52908400098527886E0F7030069857D2E4169EE7"; // EIP-55 test vector
const SOL = "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM";
const PDA = "Bn7YFE9AfLoTTQA4TYS1KahaaNftZ6SZwmCegi2PqdY7"; // off the curve: a program-derived address

describe("walletSyntax: an address's syntax, nothing more", () => {
  it.each([
    ["a checksummed EVM address", EVM, "evm"],
    ["a lower-case EVM address", EVM.toLowerCase(), "evm"],
    ["a Solana address", SOL, "solana"],
    ["the Solana system program (32 zero bytes)", "11111111111111111111111111111111", "solana"],
  ])("takes %s as it is given", (_name, input, chain) => {
    expect(walletSyntax(input)).toEqual({ ok: true, wallet: { chain, address: input } });
  });

  it.each([
    ["an EVM address too short", "0x1234", "an EVM address is 0x followed by 40 hex digits"],
    ["an EVM address not hex", `0x${"g".repeat(40)}`, "an EVM address is 0x followed by 40 hex digits"],
    ["an EVM address with 0X", `0X${"a".repeat(40)}`, "an EVM address is 0x followed by 40 hex digits"],
    ["Solana of 24 bytes", "2".repeat(32), "a Solana address is base58 of 32 bytes"],
    [
      "base58 of 31 characters",
      "1111111111111111111111111111111",
      "not an EVM address (0x + 40 hex) nor a Solana address (base58, 32 bytes)",
    ],
    [
      "Solana of 33 bytes",
      "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz",
      "a Solana address is base58 of 32 bytes",
    ],
    ["neither", "nope", "not an EVM address (0x + 40 hex) nor a Solana address (base58, 32 bytes)"],
    [
      "base58 with a 0",
      `0${SOL.slice(1)}`,
      "not an EVM address (0x + 40 hex) nor a Solana address (base58, 32 bytes)",
    ],
  ])("refuses %s", (_name, input, reason) => {
    expect(walletSyntax(input)).toEqual({ ok: false, reason });
  });

  it("checks neither the EIP-55 checksum nor the ed25519 curve: that is the service's full check", () => {
    expect(walletSyntax(EVM.replace("E0F", "e0F")).ok).toBe(true);
    expect(walletSyntax(PDA).ok).toBe(true);
  });
});

describe("the request parsers take the service's wallet check", () => {
  /** A check that refuses what the syntax takes, as the chains' full check refuses a flipped letter. */
  const refusing: WalletCheck = () => ({ ok: false, reason: "refused by the full check" });
  const canonical: WalletCheck = (input) => ({
    ok: true,
    wallet: { chain: "evm", address: input.toUpperCase() },
  });
  const body = { messages: [{ role: "user", content: "hi" }], walletAddress: EVM.toLowerCase() };

  it("refuses a chat request's wallet the check refuses, as invalid_wallet", () => {
    const refused = (() => {
      try {
        parseChatRequest(body, refusing);
      } catch (error) {
        return error;
      }
    })();
    expect(refused).toBeInstanceOf(AppError);
    expect(refused).toMatchObject({
      code: "invalid_wallet",
      fields: [{ path: "walletAddress", message: "refused by the full check" }],
    });
  });

  it("keeps the wallet the check returns, in its canonical form", () => {
    expect(parseChatRequest(body, canonical).wallet).toEqual({
      chain: "evm",
      address: EVM.toLowerCase().toUpperCase(),
    });
    expect(parsePayerConfig({ walletAddress: SOL }, "The headers", canonical).wallet?.address).toBe(
      SOL.toUpperCase(),
    );
  });

  it("refuses an MCP session's wallet the check refuses, as invalid_wallet", () => {
    expect(() => parsePayerConfig({ walletAddress: EVM }, "The headers", refusing)).toThrow(
      expect.objectContaining({ code: "invalid_wallet" }),
    );
  });
});
