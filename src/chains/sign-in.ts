import { getBase58Encoder, getPublicKeyFromAddress, type SignatureBytes, verifySignature } from "@solana/kit";
import { type Hex, HttpRequestError, TimeoutError, verifyMessage } from "viem";
import type { ChainName } from "../protocol/index.js";
import { evmPublicClient } from "./evm-wallets.js";
import { ChainUnreadable } from "./types.js";

/**
 * A wallet's signature of a plain message (a sign-in, docs/protocol.md "Signing in with a
 * wallet"): EIP-191 `personal_sign` on EVM, ed25519 over the message's UTF-8 bytes on Solana.
 */
export interface SignedMessage {
  /** The wallet, canonical (src/chains `parseWallet`). */
  address: string;
  message: string;
  /** EVM: 0x hex; Solana: base58 of 64 bytes. */
  signature: string;
}

/** The longest EVM signature taken (an EIP-6492 one carries its wallet's deployment call). */
const MAX_EVM_SIGNATURE_HEX = 2 + 2 * 4096;

function solanaSignature(text: string): SignatureBytes | undefined {
  if (!/^[1-9A-HJ-NP-Za-km-z]{64,90}$/.test(text)) return undefined;
  try {
    const bytes = getBase58Encoder().encode(text);
    return bytes.length === 64 ? (bytes as SignatureBytes) : undefined;
  } catch {
    return undefined;
  }
}

function transportFailed(error: unknown): boolean {
  for (let e: unknown = error; e instanceof Error; e = e.cause) {
    if (e instanceof HttpRequestError || e instanceof TimeoutError) return true;
  }
  return false;
}

/**
 * Whether `signed.signature` is the wallet's over `signed.message`. On EVM with `evmRpcUrl` (the
 * chain the message names, when this service has an RPC for it) the chain judges it, so contract
 * wallets sign in too (EIP-1271, and EIP-6492 for undeployed ones); without one only a plain key's
 * (EOA) signature holds. Throws {@link ChainUnreadable} when that RPC does not answer.
 */
export async function verifyWalletMessage(
  chain: ChainName,
  signed: SignedMessage,
  evmRpcUrl?: string,
): Promise<boolean> {
  if (chain === "solana") {
    const signature = solanaSignature(signed.signature);
    if (!signature) return false;
    const key = await getPublicKeyFromAddress(
      signed.address as Parameters<typeof getPublicKeyFromAddress>[0],
    );
    return verifySignature(key, signature, new TextEncoder().encode(signed.message));
  }
  const { signature } = signed;
  if (signature.length > MAX_EVM_SIGNATURE_HEX || !/^0x(?:[0-9a-fA-F]{2})+$/.test(signature)) return false;
  const args = { address: signed.address as Hex, message: signed.message, signature: signature as Hex };
  // A plain key's signature needs no chain.
  if (await verifyMessage(args).catch(() => false)) return true;
  if (!evmRpcUrl) return false;
  const client = evmPublicClient(evmRpcUrl);
  try {
    // viem reads an eth_call the endpoint failed as a bad signature: the chain must answer first.
    await client.getCode({ address: args.address });
    return await client.verifyMessage(args);
  } catch (error) {
    if (transportFailed(error)) throw new ChainUnreadable("the network's RPC did not answer");
    return false;
  }
}
