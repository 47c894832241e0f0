import { createRequire } from "node:module";

/**
 * LiteSVM's native binding (the `litesvm-<platform>` packages the npm `litesvm` wrapper picks
 * from), loaded directly: the wrapper pulls a second, newer `@solana/kit` that the devnet does not
 * need. Only the calls the devnet makes are typed here.
 */
export interface NativeAccount {
  lamports(): bigint;
  data(): Uint8Array;
  owner(): Uint8Array;
  executable(): boolean;
  rentEpoch(): bigint;
}

export interface NativeCompiledInstruction {
  programIdIndex(): number;
  accounts(): Uint8Array;
  data(): Uint8Array;
}

export interface NativeTransactionMetadata {
  signature(): Uint8Array;
  logs(): string[];
  innerInstructions(): Array<Array<{ instruction(): NativeCompiledInstruction; stackHeight(): number }>>;
  computeUnitsConsumed(): bigint;
}

export interface NativeFailedTransaction {
  err(): unknown;
  meta(): NativeTransactionMetadata;
}

export interface NativeSimulated {
  meta(): NativeTransactionMetadata;
}

export interface NativeClock {
  slot: bigint;
  unixTimestamp: bigint;
}

export interface NativeLiteSvm {
  setSigverify(on: boolean): void;
  getSigverify(): boolean;
  setBlockhashCheck(on: boolean): void;
  setTransactionHistory(capacity: bigint): void;
  minimumBalanceForRentExemption(dataLen: bigint): bigint;
  getAccount(pubkey: Uint8Array): NativeAccount | null;
  getProgramAccounts(programId: Uint8Array): Array<{ address: Uint8Array; account(): NativeAccount }>;
  setAccount(pubkey: Uint8Array, account: NativeAccount): void;
  getBalance(pubkey: Uint8Array): bigint | null;
  latestBlockhash(): string;
  expireBlockhash(): void;
  warpToSlot(slot: bigint): void;
  getClock(): NativeClock;
  setClock(clock: NativeClock): void;
  sendLegacyTransaction(tx: Uint8Array): NativeTransactionMetadata | NativeFailedTransaction;
  sendVersionedTransaction(tx: Uint8Array): NativeTransactionMetadata | NativeFailedTransaction;
  simulateLegacyTransaction(tx: Uint8Array): NativeSimulated | NativeFailedTransaction;
  simulateVersionedTransaction(tx: Uint8Array): NativeSimulated | NativeFailedTransaction;
}

export interface LiteSvmBinding {
  LiteSvm: new () => NativeLiteSvm;
  Account: new (
    lamports: bigint,
    data: Uint8Array,
    owner: Uint8Array,
    executable: boolean,
    rentEpoch: bigint,
  ) => NativeAccount;
  FailedTransactionMetadata: abstract new (...args: never[]) => NativeFailedTransaction;
  TransactionErrorFieldless: Record<string, number | string>;
  InstructionErrorFieldless: Record<string, number | string>;
}

/** The platform package's name, as the `litesvm` wrapper names them (napi-rs). */
export function liteSvmPackage(platform = process.platform, arch = process.arch, musl = isMusl()): string {
  const cpu = arch === "x64" ? "x64" : arch === "arm64" ? "arm64" : arch;
  if (platform === "linux") return `litesvm-linux-${cpu}-${musl ? "musl" : "gnu"}`;
  return `litesvm-${platform}-${cpu}`;
}

function isMusl(): boolean {
  if (process.platform !== "linux") return false;
  const report = process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined;
  return !report?.header?.glibcVersionRuntime;
}

/**
 * Loads LiteSVM for this platform, or says why not (the devnet then runs EVM only, as it does
 * where no Solana node exists).
 */
export function loadLiteSvm(
  packageName = liteSvmPackage(),
): { binding: LiteSvmBinding } | { reason: string } {
  try {
    const require = createRequire(import.meta.url);
    const binding = require(packageName) as Partial<LiteSvmBinding>;
    if (typeof binding.LiteSvm !== "function") return { reason: `${packageName} has no LiteSvm` };
    return { binding: binding as LiteSvmBinding };
  } catch (error) {
    const message = error instanceof Error ? error.message.split("\n")[0] : String(error);
    return {
      reason:
        `cannot load ${packageName} (${process.platform}-${process.arch}): ${message}; ` +
        `install it with npm install --no-save ${packageName}@1.5.0`,
    };
  }
}
