import { isOffCurveAddress, isAddress as isSolanaAddress } from "@solana/kit";
import { getAddress, isAddress as isEvmAddress } from "viem";

/** A validated wallet address and the chain family it belongs to. */
export type Wallet = { chain: "evm"; address: `0x${string}` } | { chain: "solana"; address: string };

export type WalletParse = { ok: true; wallet: Wallet } | { ok: false; reason: string };

const EVM_SHAPE = /^0x[0-9a-fA-F]{40}$/;

/**
 * Accepts an EVM address (0x + 40 hex; when letters are mixed case the EIP-55 checksum must hold,
 * so a single flipped letter is caught) or a Solana address (base58 of 32 bytes on the ed25519
 * curve: a program-derived address cannot sign, so it cannot be a payer). EVM addresses are returned
 * checksummed.
 */
export function parseWallet(input: string): WalletParse {
  if (input.startsWith("0x") || input.startsWith("0X")) {
    if (!EVM_SHAPE.test(input))
      return { ok: false, reason: "an EVM address is 0x followed by 40 hex digits" };
    const lower = input.slice(2) === input.slice(2).toLowerCase();
    const upper = input.slice(2) === input.slice(2).toUpperCase();
    if (!lower && !upper && !isEvmAddress(input, { strict: true })) {
      return { ok: false, reason: "the EIP-55 checksum of this mixed-case EVM address does not match" };
    }
    return { ok: true, wallet: { chain: "evm", address: getAddress(input.toLowerCase()) } };
  }
  if (!isSolanaAddress(input)) {
    return { ok: false, reason: "not an EVM address (0x + 40 hex) nor a Solana address (base58, 32 bytes)" };
  }
  if (isOffCurveAddress(input)) {
    return {
      ok: false,
      reason: "this Solana address is off the ed25519 curve (a program-derived address cannot sign)",
    };
  }
  return { ok: true, wallet: { chain: "solana", address: input } };
}
