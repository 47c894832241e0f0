/**
 * What the local Solana node's RPC answers look like: accounts in the encodings clients ask for
 * (base64, base58, jsonParsed for SPL Token accounts and mints), transaction errors in the RPC's
 * JSON form, the memo listing of `getSignaturesForAddress`, a transaction in `json` encoding.
 */
import {
  getBase58Decoder,
  getBase64Decoder,
  getCompiledTransactionMessageDecoder,
  getTransactionDecoder,
} from "@solana/kit";
import type { LandedTransaction } from "./history.js";
import type { NativeAccount } from "./litesvm.js";

type ReadonlyUint8Array = Parameters<ReturnType<typeof getBase58Decoder>["decode"]>[0];

export const TOKEN_PROGRAM = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA";
export const TOKEN_2022_PROGRAM = "TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb";
const MEMO_PROGRAMS = new Set([
  "MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr",
  "Memo1UhkJRfHyvLMcVucJwxXeuD728EqVrDxjRqaQ9JQ",
]);
/** What real nodes answer for an account's rent epoch (rent-exempt accounts: u64::MAX). */
const RENT_EPOCH = 18446744073709551615n;

const base58 = getBase58Decoder();
const base64 = getBase64Decoder();
export const toBase58 = (bytes: Uint8Array | ReadonlyUint8Array): string => base58.decode(bytes);
export const toBase64 = (bytes: Uint8Array): string => base64.decode(bytes);

/** The parts of a wire transaction the node needs, decoded once. */
export interface DecodedTransaction {
  messageBytes: Uint8Array;
  signatures: Array<Uint8Array | null>;
  accounts: string[];
  blockhash: string;
  /** Signatures the message requires (its header), the fee's base. */
  requiredSignatures: number;
  versioned: boolean;
  message: ReturnType<ReturnType<typeof getCompiledTransactionMessageDecoder>["decode"]>;
}

export function decodeTransaction(wire: Uint8Array): DecodedTransaction {
  const tx = getTransactionDecoder().decode(wire);
  const messageBytes = new Uint8Array(tx.messageBytes);
  const message = getCompiledTransactionMessageDecoder().decode(messageBytes);
  return {
    messageBytes,
    signatures: Object.values(tx.signatures).map((s) => (s ? new Uint8Array(s) : null)),
    accounts: message.staticAccounts.map(String),
    blockhash: message.lifetimeToken,
    requiredSignatures: message.header.numSignerAccounts,
    versioned: ((messageBytes[0] ?? 0) & 0x80) !== 0,
    message,
  };
}

/** "[length] text" per memo instruction, joined by "; ", as the RPC lists them; null without. */
export function memoListing(decoded: DecodedTransaction): string | null {
  const memos: string[] = [];
  for (const ix of decoded.message.instructions ?? []) {
    if (!MEMO_PROGRAMS.has(decoded.accounts[ix.programAddressIndex] ?? "")) continue;
    const text = new TextDecoder().decode(ix.data ?? new Uint8Array());
    memos.push(`[${text.length}] ${text}`);
  }
  return memos.length ? memos.join("; ") : null;
}

/** A transaction in the RPC's `json` encoding (the message's fields, instruction data base58). */
export function jsonTransaction(decoded: DecodedTransaction) {
  const { message } = decoded;
  return {
    signatures: decoded.signatures.map((s) => (s ? toBase58(s) : "1".repeat(64))),
    message: {
      accountKeys: decoded.accounts,
      header: {
        numRequiredSignatures: message.header.numSignerAccounts,
        numReadonlySignedAccounts: message.header.numReadonlySignerAccounts,
        numReadonlyUnsignedAccounts: message.header.numReadonlyNonSignerAccounts,
      },
      recentBlockhash: decoded.blockhash,
      instructions: (message.instructions ?? []).map((ix) => ({
        programIdIndex: ix.programAddressIndex,
        accounts: [...(ix.accountIndices ?? [])],
        data: toBase58(ix.data ?? new Uint8Array()),
        stackHeight: null,
      })),
      ...(decoded.versioned
        ? { addressTableLookups: (message as { addressTableLookups?: unknown[] }).addressTableLookups ?? [] }
        : {}),
    },
  };
}

export type AccountEncoding = "base64" | "base58" | "jsonParsed" | "base64+zstd";

/** An account as `getAccountInfo` answers it; `jsonParsed` parses SPL Token accounts and mints. */
export function encodeAccount(
  account: NativeAccount,
  encoding: AccountEncoding,
  decimalsOf: (mint: string) => number,
) {
  const data = account.data();
  const owner = toBase58(account.owner());
  const base = {
    executable: account.executable(),
    lamports: Number(account.lamports()),
    owner,
    rentEpoch: RENT_EPOCH,
    space: data.length,
  };
  if (encoding === "jsonParsed") {
    const parsed = parseToken(owner, data, decimalsOf);
    if (parsed) return { ...base, data: parsed };
  }
  if (encoding === "base58") return { ...base, data: [toBase58(data), "base58"] };
  return { ...base, data: [toBase64(data), "base64"] };
}

/** SPL Token's 165-byte account and 82-byte mint, as the RPC's `jsonParsed` shows them. */
function parseToken(owner: string, data: Uint8Array, decimalsOf: (mint: string) => number) {
  if (owner !== TOKEN_PROGRAM && owner !== TOKEN_2022_PROGRAM) return undefined;
  const program = owner === TOKEN_PROGRAM ? "spl-token" : "spl-token-2022";
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  if (data.length === 82) {
    const authority = view.getUint32(0, true) ? toBase58(data.slice(4, 36)) : null;
    const freeze = view.getUint32(46, true) ? toBase58(data.slice(50, 82)) : null;
    const info = {
      decimals: data[44],
      freezeAuthority: freeze,
      isInitialized: data[45] === 1,
      mintAuthority: authority,
      supply: view.getBigUint64(36, true).toString(),
    };
    return { program, parsed: { info, type: "mint" }, space: 82 };
  }
  if (data.length < 165) return undefined;
  const mint = toBase58(data.slice(0, 32));
  const decimals = decimalsOf(mint);
  const amount = view.getBigUint64(64, true);
  const info = {
    isNative: view.getUint32(109, true) !== 0,
    mint,
    owner: toBase58(data.slice(32, 64)),
    state: data[108] === 2 ? "frozen" : data[108] === 1 ? "initialized" : "uninitialized",
    tokenAmount: tokenAmount(amount, decimals),
  };
  return { program, parsed: { info, type: "account" }, space: data.length };
}

export function tokenAmount(amount: bigint, decimals: number) {
  const scale = 10n ** BigInt(decimals);
  const whole = amount / scale;
  const fraction = (amount % scale).toString().padStart(decimals, "0").replace(/0+$/, "");
  const uiAmountString = fraction ? `${whole}.${fraction}` : whole.toString();
  return { amount: amount.toString(), decimals, uiAmount: Number(uiAmountString), uiAmountString };
}

const TRANSACTION_ERRORS = [
  "AccountInUse", "AccountLoadedTwice", "AccountNotFound", "ProgramAccountNotFound", "InsufficientFundsForFee",
  "InvalidAccountForFee", "AlreadyProcessed", "BlockhashNotFound", "CallChainTooDeep", "MissingSignatureForFee",
  "InvalidAccountIndex", "SignatureFailure", "InvalidProgramForExecution", "SanitizeFailure", "ClusterMaintenance",
  "AccountBorrowOutstanding", "WouldExceedMaxBlockCostLimit", "UnsupportedVersion", "InvalidWritableAccount",
  "WouldExceedMaxAccountCostLimit", "WouldExceedAccountDataBlockLimit", "TooManyAccountLocks",
  "AddressLookupTableNotFound", "InvalidAddressLookupTableOwner", "InvalidAddressLookupTableData",
  "InvalidAddressLookupTableIndex", "InvalidRentPayingAccount", "WouldExceedMaxVoteCostLimit",
  "WouldExceedAccountDataTotalLimit", "MaxLoadedAccountsDataSizeExceeded", "ResanitizationNeeded",
  "InvalidLoadedAccountsDataSizeLimit", "UnbalancedTransaction", "ProgramCacheHitMaxLimit", "CommitCancelled",
]; // biome-ignore format: a table

const INSTRUCTION_ERRORS = [
  "GenericError", "InvalidArgument", "InvalidInstructionData", "InvalidAccountData", "AccountDataTooSmall",
  "InsufficientFunds", "IncorrectProgramId", "MissingRequiredSignature", "AccountAlreadyInitialized",
  "UninitializedAccount", "UnbalancedInstruction", "ModifiedProgramId", "ExternalAccountLamportSpend",
  "ExternalAccountDataModified", "ReadonlyLamportChange", "ReadonlyDataModified", "DuplicateAccountIndex",
  "ExecutableModified", "RentEpochModified", "NotEnoughAccountKeys", "AccountDataSizeChanged", "AccountNotExecutable",
  "AccountBorrowFailed", "AccountBorrowOutstanding", "DuplicateAccountOutOfSync", "InvalidError",
  "ExecutableDataModified", "ExecutableLamportChange", "ExecutableAccountNotRentExempt", "UnsupportedProgramId",
  "CallDepth", "MissingAccount", "ReentrancyNotAllowed", "MaxSeedLengthExceeded", "InvalidSeeds", "InvalidRealloc",
  "ComputationalBudgetExceeded", "PrivilegeEscalation", "ProgramEnvironmentSetupFailure", "ProgramFailedToComplete",
  "ProgramFailedToCompile", "Immutable", "IncorrectAuthority", "AccountNotRentExempt", "InvalidAccountOwner",
  "ArithmeticOverflow", "UnsupportedSysvar", "IllegalOwner", "MaxAccountsDataAllocationsExceeded",
  "MaxAccountsExceeded", "MaxInstructionTraceLengthExceeded", "BuiltinProgramsMustConsumeComputeUnits",
]; // biome-ignore format: a table

/** LiteSVM's transaction error (an enum number or a small class) in the RPC's JSON form. */
export function transactionError(err: unknown): unknown {
  if (typeof err === "number") return TRANSACTION_ERRORS[err] ?? `TransactionError${err}`;
  const e = err as { index?: number; accountIndex?: number; err?: () => unknown };
  if (typeof e?.err === "function" && typeof e.index === "number") {
    return { InstructionError: [e.index, instructionError(e.err())] };
  }
  if (typeof e?.index === "number") return { DuplicateInstruction: e.index };
  if (typeof e?.accountIndex === "number") {
    const name = String(err).includes("Restricted")
      ? "ProgramExecutionTemporarilyRestricted"
      : "InsufficientFundsForRent";
    return { [name]: { account_index: e.accountIndex } };
  }
  return String(err);
}

function instructionError(err: unknown): unknown {
  if (typeof err === "number") return INSTRUCTION_ERRORS[err] ?? `InstructionError${err}`;
  const e = err as { code?: number; msg?: string };
  if (typeof e?.code === "number") return { Custom: e.code };
  if (typeof e?.msg === "string") return { BorshIoError: e.msg };
  return String(err);
}

export function status(tx: LandedTransaction | undefined) {
  if (!tx) return null;
  return {
    slot: tx.slot,
    confirmations: null,
    err: tx.err,
    status: tx.err === null ? { Ok: null } : { Err: tx.err },
    confirmationStatus: "finalized",
  };
}

export function transactionAnswer(tx: LandedTransaction, encoding: unknown) {
  const decoded = decodeTransaction(tx.wire);
  const transaction =
    encoding === "json" || encoding === "jsonParsed"
      ? jsonTransaction(decoded)
      : encoding === "base58"
        ? [toBase58(tx.wire), "base58"]
        : [toBase64(tx.wire), "base64"];
  return {
    slot: tx.slot,
    blockTime: tx.blockTime,
    version: decoded.versioned ? 0 : "legacy",
    transaction,
    meta: {
      err: tx.err,
      status: tx.err === null ? { Ok: null } : { Err: tx.err },
      fee: tx.fee,
      preBalances: tx.preBalances,
      postBalances: tx.postBalances,
      innerInstructions: [],
      logMessages: tx.logs,
      preTokenBalances: [],
      postTokenBalances: [],
      rewards: [],
      loadedAddresses: { writable: [], readonly: [] },
      computeUnitsConsumed: tx.computeUnits,
    },
  };
}
