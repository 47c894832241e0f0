import { createHash } from "node:crypto";
import {
  type Address,
  getAddressDecoder,
  getAddressEncoder,
  getCompiledTransactionMessageDecoder,
  getTransactionDecoder,
} from "@solana/kit";
import { ASSOCIATED_TOKEN_PROGRAM_ADDRESS } from "@solana-program/token";

/**
 * What a signed Solana payment moves, read from its wire transaction before it is sent: the
 * chain family compares it with the quote (svm.ts, `authorization`).
 */

const TOKEN_PROGRAMS = new Set([
  "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA",
  "TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb",
]);
const TRANSFER_CHECKED = 12;
const CLOSE_ACCOUNT = 9;

/** A `TransferChecked`: its amount, the mint, the account credited and the token program. */
export interface SolanaTokenTransfer {
  amount: bigint;
  mint: string;
  destination: string;
  program: string;
}

/**
 * What a wire transaction asks the token programs to move: each `TransferChecked`, and
 * `undefined` for any other token instruction (an approval, a plain transfer: not what is signed).
 * Closing an emptied account (a tab's return closes the session key's) moves no tokens: left out.
 * Accounts from an address lookup table are not in the message: such a transfer is `undefined` too.
 */
export function solanaTokenTransfers(wireTransaction: Uint8Array): (SolanaTokenTransfer | undefined)[] {
  const decoded = getTransactionDecoder().decode(wireTransaction);
  const message = getCompiledTransactionMessageDecoder().decode(decoded.messageBytes);
  const accountAt = (ix: { accountIndices?: number[] }, n: number) =>
    message.staticAccounts[ix.accountIndices?.[n] ?? -1];
  return (message.instructions ?? [])
    .filter((ix) => TOKEN_PROGRAMS.has(message.staticAccounts[ix.programAddressIndex] ?? ""))
    .filter((ix) => !(ix.data?.[0] === CLOSE_ACCOUNT && ix.data.length === 1))
    .map((ix) => {
      const data = ix.data;
      // TransferChecked: accounts source, mint, destination, authority; data amount, decimals.
      const [mint, destination] = [accountAt(ix, 1), accountAt(ix, 2)];
      if (!data || data[0] !== TRANSFER_CHECKED || data.length < 10 || !mint || !destination)
        return undefined;
      const amount = new DataView(data.buffer, data.byteOffset, data.byteLength).getBigUint64(1, true);
      const program = message.staticAccounts[ix.programAddressIndex] as string;
      return { amount, mint, destination, program };
    });
}

/**
 * Whether `account` is derived from (owner, token program, mint) under the associated-token
 * program, the address the x402 scheme pays (the payee's associated token account). Any bump
 * seed is taken: only the canonical one can exist on chain, and none other can hold tokens.
 * Synchronous (SHA-256 only), so the check sits where the signed payment is checked.
 */
export function isAssociatedTokenAccount(
  account: string,
  owner: string,
  program: string,
  mint: string,
): boolean {
  const encode = getAddressEncoder();
  let seeds: Uint8Array[];
  try {
    seeds = [owner, program, mint].map((a) => new Uint8Array(encode.encode(a as Address)));
  } catch {
    return false; // not an address: the payee named cannot own it
  }
  const suffix = [
    new Uint8Array(encode.encode(ASSOCIATED_TOKEN_PROGRAM_ADDRESS)),
    Buffer.from("ProgramDerivedAddress"),
  ];
  const decode = getAddressDecoder();
  for (let bump = 255; bump >= 0; bump--) {
    const hash = createHash("sha256");
    for (const part of [...seeds, Uint8Array.of(bump), ...suffix]) hash.update(part);
    if (decode.decode(hash.digest()) === account) return true;
  }
  return false;
}
