import { type SignInChallenge, signInMessage } from "../protocol/sign-in.js";
import { ProtocolError } from "../protocol/stream.js";
import type { Eip1193Provider } from "./signer.js";

/**
 * The wallet that signs in (`ChatClient.signIn`, docs/clients.md "Signing in with a wallet"): its
 * address, the CAIP-2 chain it signs in on, and a function that signs the message's text as the
 * service checks it: EIP-191 `personal_sign` on EVM (0x hex), ed25519 over the UTF-8 bytes on
 * Solana (base58). The helpers below make one from a viem account, an EIP-1193 provider or a
 * `@solana/kit` signer; sign-in signs no payment and moves nothing.
 */
export interface SignInWallet {
  address: string;
  /** `eip155:<chain id>` or `solana:<genesis hash prefix>`, e.g. `eip155:8453`. */
  chainId: string;
  signMessage(message: string): Promise<string>;
}

/** A viem account (`privateKeyToAccount`, a local account) or anything with its `signMessage`. */
export interface EvmMessageSigner {
  address: string;
  signMessage(args: { message: string }): Promise<string>;
}

/** A `@solana/kit` `MessagePartialSigner` (a `KeyPairSigner`, say), by its shape. */
export interface SolanaMessageSigner {
  address: string;
  signMessages(
    messages: readonly { content: Uint8Array; signatures: Record<string, unknown> }[],
  ): Promise<readonly Record<string, Uint8Array>[]>;
}

const BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";

/** Base58 (Bitcoin's alphabet, as Solana writes signatures). */
export function base58(bytes: Uint8Array): string {
  let value = 0n;
  for (const byte of bytes) value = value * 256n + BigInt(byte);
  let text = "";
  while (value > 0n) {
    text = BASE58[Number(value % 58n)] + text;
    value /= 58n;
  }
  for (const byte of bytes) {
    if (byte !== 0) break;
    text = `1${text}`;
  }
  return text;
}

/** An EVM account signs in (viem's `signMessage`: EIP-191). */
export function evmSignInWallet(account: EvmMessageSigner, chainId: string): SignInWallet {
  return { address: account.address, chainId, signMessage: (message) => account.signMessage({ message }) };
}

/** A browser wallet signs in through EIP-1193 `personal_sign` (the message as UTF-8 hex). */
export function eip1193SignInWallet(
  provider: Eip1193Provider,
  address: string,
  chainId: string,
): SignInWallet {
  const hex = (text: string) =>
    `0x${[...new TextEncoder().encode(text)].map((b) => b.toString(16).padStart(2, "0")).join("")}`;
  return {
    address,
    chainId,
    signMessage: async (message) =>
      String(await provider.request({ method: "personal_sign", params: [hex(message), address] })),
  };
}

/** A `@solana/kit` signer signs in: ed25519 over the message's bytes, sent as base58. */
export function solanaSignInWallet(signer: SolanaMessageSigner, chainId: string): SignInWallet {
  return {
    address: signer.address,
    chainId,
    signMessage: async (message) => {
      const [signed] = await signer.signMessages([
        { content: new TextEncoder().encode(message), signatures: {} },
      ]);
      const signature = signed?.[signer.address];
      if (!signature) throw new Error("the Solana signer returned no signature");
      return base58(signature);
    },
  };
}

/** EVM addresses compare without their checksum's case; base58 ones exactly. */
const sameAddress = (a: string, b: string, chainId: string) =>
  chainId.startsWith("eip155:") ? a.toLowerCase() === b.toLowerCase() : a === b;

/**
 * What the wallet is asked to sign must be what it thinks it signs: a message for the service
 * that issued it (`host`, when known), for this wallet and chain, whose text is exactly its
 * fields. Anything else is a ProtocolError, and nothing is signed.
 */
export function checkChallenge(
  challenge: SignInChallenge,
  wallet: SignInWallet,
  host: string | undefined,
): void {
  const { message, ...fields } = challenge;
  const problem =
    host !== undefined && fields.domain !== host
      ? `it is for ${fields.domain}, not ${host}`
      : !sameAddress(fields.address, wallet.address, fields.chainId) || fields.chainId !== wallet.chainId
        ? "it names another wallet or chain"
        : message !== signInMessage(fields)
          ? "its text is not its fields"
          : undefined;
  if (problem) throw new ProtocolError(`The sign-in message was not signed: ${problem}.`);
}
