/**
 * Solana transactions as the client's checks receive them, for its tests: compiled, unsigned, in
 * the wire's base64. No network: the blockhash is made up unless one is given.
 */
import {
  type Address,
  address,
  appendTransactionMessageInstructions,
  type Blockhash,
  compileTransaction,
  createTransactionMessage,
  generateKeyPairSigner,
  getBase64EncodedWireTransaction,
  type Instruction,
  pipe,
  setTransactionMessageFeePayer,
  setTransactionMessageLifetimeUsingBlockhash,
} from "@solana/kit";
import { findAssociatedTokenPda, TOKEN_PROGRAM_ADDRESS } from "@solana-program/token";

/** The devnet's USDC mint (devnet's own address). */
export const DEVNET_USDC = address("4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU");

/** A new random address. */
export async function newAddress(): Promise<Address> {
  return (await generateKeyPairSigner()).address;
}

/** `owner`'s associated token account for `mint`. */
export async function tokenAccount(owner: string, mint: Address = DEVNET_USDC): Promise<Address> {
  return (
    await findAssociatedTokenPda({ owner: address(owner), mint, tokenProgram: TOKEN_PROGRAM_ADDRESS })
  )[0];
}

/** `instructions` in one transaction that `feePayer` pays for, as base64 wire bytes. */
export async function wireTransaction(
  feePayer: string,
  instructions: readonly Instruction[],
  blockhash?: string,
): Promise<string> {
  const lifetime = {
    blockhash: (blockhash ?? (await newAddress())) as unknown as Blockhash,
    lastValidBlockHeight: 100n,
  };
  const message = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayer(address(feePayer), m),
    (m) => setTransactionMessageLifetimeUsingBlockhash(lifetime, m),
    (m) => appendTransactionMessageInstructions(instructions, m),
  );
  return getBase64EncodedWireTransaction(compileTransaction(message));
}
