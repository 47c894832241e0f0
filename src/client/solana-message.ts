/**
 * A Solana wire transaction read as a wallet-side check needs it: its fee payer, its instructions by
 * program, their accounts and data. `@solana/kit` is an optional peer of the client package (only
 * Solana approvals need it), so it is loaded here on demand.
 */

export const ATA_PROGRAM = "ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL";
export const TOKEN_PROGRAMS: ReadonlySet<string> = new Set([
  "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA",
  "TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb",
]);
export const SYSTEM_PROGRAM = "11111111111111111111111111111111";
export const MEMO_PROGRAM = "MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr";
export const COMPUTE_BUDGET_PROGRAM = "ComputeBudget111111111111111111111111111111";
/** The token program's `TransferChecked`: accounts source, mint, destination, authority; data amount, decimals. */
export const TRANSFER_CHECKED = 12;

export interface DecodedInstruction {
  program: string | undefined;
  accounts: (string | undefined)[];
  data: Uint8Array;
}

export interface DecodedMessage {
  /** The first static account: who pays the transaction's fee. */
  feePayer: string | undefined;
  /** Accounts read from address lookup tables, which a check cannot see without the chain. */
  usesLookupTables: boolean;
  instructions: DecodedInstruction[];
}

export async function decodeSolanaMessage(base64: string): Promise<DecodedMessage> {
  const { getBase64Encoder, getCompiledTransactionMessageDecoder, getTransactionDecoder } = await import(
    "@solana/kit"
  );
  const wire = getTransactionDecoder().decode(getBase64Encoder().encode(base64));
  const message = getCompiledTransactionMessageDecoder().decode(wire.messageBytes);
  const keys = message.staticAccounts as readonly string[];
  return {
    feePayer: keys[0],
    usesLookupTables: ((message as { addressTableLookups?: unknown[] }).addressTableLookups?.length ?? 0) > 0,
    instructions: message.instructions.map((ix) => ({
      program: keys[ix.programAddressIndex],
      accounts: (ix.accountIndices ?? []).map((i) => keys[i]),
      data: Uint8Array.from(ix.data ?? []),
    })),
  };
}

/** A little-endian u64 of instruction data. */
export function u64(data: Uint8Array, at: number): bigint {
  return new DataView(data.buffer, data.byteOffset, data.byteLength).getBigUint64(at, true);
}

/** The associated token account of `owner` for `mint` under `tokenProgram`. */
export async function associatedTokenAccount(
  owner: string,
  mint: string,
  tokenProgram: string,
): Promise<string> {
  const { address, getAddressEncoder, getProgramDerivedAddress } = await import("@solana/kit");
  const encoder = getAddressEncoder();
  const [pda] = await getProgramDerivedAddress({
    programAddress: address(ATA_PROGRAM),
    seeds: [
      encoder.encode(address(owner)),
      encoder.encode(address(tokenProgram)),
      encoder.encode(address(mint)),
    ],
  });
  return pda;
}
