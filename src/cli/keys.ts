import { readFile, stat } from "node:fs/promises";
import { createKeyPairSignerFromBytes, type KeyPairSigner } from "@solana/kit";
import { type PrivateKeyAccount, privateKeyToAccount } from "viem/accounts";
import {
  type ApprovalAnswer,
  type PaymentUpdate,
  signEvmApproval,
  signSolanaApproval,
} from "../client/index.js";
import { UsageError } from "./args.js";

/**
 * A local key that signs approvals in the terminal (`--key-file`): an EVM private key (hex, 32
 * bytes, `0x` optional) or a Solana keypair as `solana-keygen` writes it (a JSON array of 64
 * numbers). The key stays in this process: it is never printed or sent; only signatures leave.
 */
export type LocalKey =
  | { chain: "evm"; address: string; account: PrivateKeyAccount }
  | { chain: "solana"; address: string; signer: KeyPairSigner };

/** Read a key file; a UsageError says what was wrong without echoing the file. */
export async function loadKeyFile(path: string): Promise<LocalKey> {
  let text: string;
  try {
    text = (await readFile(path, "utf8")).trim();
  } catch (error) {
    throw new UsageError(
      `--key-file: cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? "error"})`,
    );
  }
  return parseKey(text);
}

/** A warning when others may read the key file (as ssh warns), else undefined. */
export async function keyFileWarning(path: string): Promise<string | undefined> {
  if (process.platform === "win32") return undefined;
  const mode = (await stat(path).catch(() => undefined))?.mode;
  if (mode === undefined || (mode & 0o077) === 0) return undefined;
  return `Warning: ${path} can be read by other users (mode ${(mode & 0o777).toString(8)}); chmod 600 it.`;
}

/** Parse a key file's text (see {@link loadKeyFile}). */
export async function parseKey(text: string): Promise<LocalKey> {
  const trimmed = text.trim();
  if (trimmed.startsWith("[")) {
    let bytes: unknown;
    try {
      bytes = JSON.parse(trimmed);
    } catch {
      throw new UsageError("--key-file: not a JSON array of 64 numbers (solana-keygen's format)");
    }
    if (
      !Array.isArray(bytes) ||
      bytes.length !== 64 ||
      !bytes.every((b) => Number.isInteger(b) && b >= 0 && b <= 255)
    )
      throw new UsageError("--key-file: a Solana keypair is a JSON array of 64 numbers from 0 to 255");
    try {
      const signer = await createKeyPairSignerFromBytes(Uint8Array.from(bytes as number[]));
      return { chain: "solana", address: signer.address, signer };
    } catch {
      throw new UsageError("--key-file: the Solana keypair's public half does not match its secret half");
    }
  }
  const hex = trimmed.startsWith("0x") ? trimmed : `0x${trimmed}`;
  if (!/^0x[0-9a-fA-F]{64}$/.test(hex))
    throw new UsageError("--key-file: expected an EVM private key (64 hex digits) or a Solana JSON keypair");
  const account = privateKeyToAccount(hex as `0x${string}`);
  return { chain: "evm", address: account.address, account };
}

/** Whether this key can answer this payment's approval (the right chain family and wallet). */
export function canSign(key: LocalKey, update: PaymentUpdate): boolean {
  const approval = update.approval;
  if (!approval) return false;
  const family = approval.sign.kind === "evm-typed-data" ? "evm" : "solana";
  if (family !== key.chain) return false;
  return key.chain === "evm"
    ? approval.wallet.toLowerCase() === key.address.toLowerCase()
    : approval.wallet === key.address;
}

/** Sign the approval with the local key. */
export function signWith(key: LocalKey, update: PaymentUpdate): Promise<ApprovalAnswer> {
  return key.chain === "evm" ? signEvmApproval(update, key.account) : signSolanaApproval(update, key.signer);
}
