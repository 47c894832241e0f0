/** The chain families a wallet belongs to (src/chains has one module for each, under this name). */
export const WALLET_CHAINS = ["evm", "solana"] as const;
export type ChainName = (typeof WALLET_CHAINS)[number];

/** A validated wallet address, canonical (EVM checksummed), and the chain family it belongs to. */
export interface Wallet {
  chain: ChainName;
  address: string;
}

export type WalletParse = { ok: true; wallet: Wallet } | { ok: false; reason: string };

/**
 * The full check of a wallet address, which the service gives the request parsers (request.ts,
 * page-answer.ts): each chain family checks its own format and returns the canonical address (EVM:
 * 0x + 40 hex, EIP-55 checksum when mixed case; Solana: base58 of 32 bytes on the ed25519 curve).
 * It is `parseWallet` of src/chains; the protocol itself knows only the syntax, {@link walletSyntax}.
 */
export type WalletCheck = (input: string) => WalletParse;

const EVM_PREFIX = /^0x/i;
const EVM_SHAPE = /^0x[0-9a-fA-F]{40}$/;
const BASE58_ALPHABET = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
const BASE58_SHAPE = /^[1-9A-HJ-NP-Za-km-z]{32,44}$/;

/** How many bytes a base58 string decodes to (leading `1`s are zero bytes). */
function base58Length(text: string): number {
  let value = 0n;
  for (const char of text) value = value * 58n + BigInt(BASE58_ALPHABET.indexOf(char));
  const zeros = /^1*/.exec(text)?.[0].length ?? 0;
  return zeros + (value === 0n ? 0 : Math.ceil(value.toString(16).length / 2));
}

/**
 * The syntax of a wallet address, and nothing more: EVM is 0x + 40 hex digits, Solana is base58
 * that decodes to 32 bytes. The address comes back as given: neither the EIP-55 checksum nor the
 * ed25519 curve is checked here, so this never stands for {@link WalletCheck} where money moves.
 */
export function walletSyntax(input: string): WalletParse {
  if (EVM_PREFIX.test(input)) {
    return EVM_SHAPE.test(input)
      ? { ok: true, wallet: { chain: "evm", address: input } }
      : { ok: false, reason: "an EVM address is 0x followed by 40 hex digits" };
  }
  if (BASE58_SHAPE.test(input)) {
    return base58Length(input) === 32
      ? { ok: true, wallet: { chain: "solana", address: input } }
      : { ok: false, reason: "a Solana address is base58 of 32 bytes" };
  }
  return { ok: false, reason: "not an EVM address (0x + 40 hex) nor a Solana address (base58, 32 bytes)" };
}
