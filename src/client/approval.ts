import type { Transaction } from "@solana/kit";
import type { ApprovalRequest, PaymentUpdate, WalletRequest } from "../protocol/stream.js";
import { checkEvmApproval } from "./evm-payment.js";
import type { ApprovalAnswer } from "./request.js";

/**
 * Approving a payment in the user's own wallet (docs/protocol.md, "Approval"). A `p:` update with
 * status `awaiting_approval` carries `approval: {wallet, expiresAt, sign}`; the wallet signs
 * `sign`, and the next request carries the answer these helpers build. The service checks that
 * what was signed is exactly the payment it stored, so nothing here needs trusting; {@link
 * describeApproval} still shows a person what the signature moves before they agree.
 */

type Hex = `0x${string}`;

/** The typed data exactly as viem's `signTypedData` takes it (bigints, numeric chainId, no EIP712Domain). */
export interface ViemTypedData {
  domain: Record<string, unknown>;
  types: Record<string, Array<{ name: string; type: string }>>;
  primaryType: string;
  message: Record<string, unknown>;
}

/**
 * Anything that signs EIP-712 typed data as viem does: a viem `LocalAccount`
 * (`privateKeyToAccount(...)`) or a `WalletClient` (an injected EIP-1193 wallet through
 * `createWalletClient({transport: custom(window.ethereum)})`).
 */
export interface EvmTypedDataSigner {
  // biome-ignore lint/suspicious/noExplicitAny: viem's signTypedData is generic over the typed data's literal types
  signTypedData(parameters: any): Promise<Hex>;
  /** A WalletClient's hoisted account, if it has one. */
  account?: { address: string } | undefined;
  /** viem sets `local` on accounts, `walletClient` on wallet clients. */
  type?: string;
}

/**
 * A `@solana/kit` `TransactionPartialSigner` (a `KeyPairSigner`, say), by its shape: the client's
 * declarations name no `@solana/kit` type, so a program without Solana needs no kit installed.
 */
export interface SolanaPartialSigner {
  readonly address: string;
  /** Signatures by address, one dictionary per transaction. */
  signTransactions(
    transactions: readonly unknown[],
  ): Promise<readonly Readonly<Record<string, Uint8Array>>[]>;
}

/** A `@solana/kit` `TransactionModifyingSigner` (a Wallet Standard wallet's), by its shape. */
export interface SolanaModifyingSigner {
  readonly address: string;
  /** The transactions, signed. */
  modifyAndSignTransactions(transactions: readonly unknown[]): Promise<readonly object[]>;
}

/** A `@solana/kit` signer (a `KeyPairSigner`, a Wallet Standard signer) or a raw `CryptoKeyPair`. */
export type SolanaApprovalSigner = SolanaPartialSigner | SolanaModifyingSigner | CryptoKeyPair;

function isUpdate(source: PaymentUpdate | ApprovalRequest): source is PaymentUpdate {
  return typeof source.paymentId === "string" && typeof source.status === "string";
}

/** An update's approval request, or a clear error when it has none. */
function requestOf(source: PaymentUpdate | ApprovalRequest): ApprovalRequest {
  const approval = isUpdate(source) ? source.approval : source;
  if (!approval) throw new TypeError("this payment update carries no approval request");
  return approval;
}

function paymentIdOf(source: PaymentUpdate | ApprovalRequest): string {
  return isUpdate(source) ? source.paymentId : "";
}

const UINT_FIELDS = new Set(["uint8", "uint16", "uint32", "uint64", "uint128", "uint256", "int256"]);

/**
 * The wallet request's `eth_signTypedData_v4` payload turned into viem's shape: `EIP712Domain`
 * dropped from `types` (viem derives it), `chainId` a number, integer fields bigints.
 */
export function toViemTypedData(sign: Extract<WalletRequest, { kind: "evm-typed-data" }>): ViemTypedData {
  const { domain, types, primaryType, message } = sign.typedData;
  const { EIP712Domain: _domainType, ...rest } = types;
  const fields = types[primaryType] ?? [];
  const converted: Record<string, unknown> = { ...message };
  for (const field of fields) {
    const value = message[field.name];
    if (UINT_FIELDS.has(field.type) && (typeof value === "string" || typeof value === "number"))
      converted[field.name] = BigInt(value);
  }
  return {
    domain: { ...domain, ...(domain.chainId !== undefined ? { chainId: Number(domain.chainId) } : {}) },
    types: rest,
    primaryType,
    message: converted,
  };
}

/**
 * Sign an EVM approval with a viem account or wallet client; resolves to the answer to send.
 * Refuses (TypeError) a request for another chain family or a signer of another wallet.
 */
export async function signEvmApproval(
  source: PaymentUpdate | ApprovalRequest,
  signer: EvmTypedDataSigner,
  paymentId: string = paymentIdOf(source),
): Promise<ApprovalAnswer> {
  const approval = requestOf(source);
  if (approval.sign.kind !== "evm-typed-data")
    throw new TypeError(`this approval asks for ${approval.sign.kind}, not an EVM signature`);
  if (!paymentId) throw new TypeError("signEvmApproval needs the payment id");
  const address = signerAddress(signer);
  if (address && address.toLowerCase() !== approval.wallet.toLowerCase())
    throw new TypeError(`the signer is ${address}, but the payment must be signed by ${approval.wallet}`);
  const typedData = toViemTypedData(approval.sign);
  const isWalletClient = signer.type === "walletClient";
  const signature = await signer.signTypedData(
    isWalletClient ? { account: signer.account ?? approval.wallet, ...typedData } : typedData,
  );
  return { paymentId, signature };
}

function signerAddress(signer: EvmTypedDataSigner): string | undefined {
  if (signer.type === "walletClient") return signer.account?.address;
  const own = (signer as { address?: unknown }).address;
  return typeof own === "string" ? own : undefined;
}

function isCryptoKeyPair(value: SolanaApprovalSigner): value is CryptoKeyPair {
  return "privateKey" in value && "publicKey" in value && !("address" in value);
}

/**
 * Sign a Solana approval: the base64 wire transaction is decoded, signed in the wallet's slot
 * (the facilitator, its fee payer, signs last) and re-encoded; resolves to the answer to send.
 */
export async function signSolanaApproval(
  source: PaymentUpdate | ApprovalRequest,
  signer: SolanaApprovalSigner,
  paymentId: string = paymentIdOf(source),
): Promise<ApprovalAnswer> {
  const approval = requestOf(source);
  if (approval.sign.kind !== "solana-transaction")
    throw new TypeError(`this approval asks for ${approval.sign.kind}, not a Solana transaction`);
  if (!paymentId) throw new TypeError("signSolanaApproval needs the payment id");
  // Loaded here, not with the module: `@solana/kit` is an optional peer of the client package
  // (only Solana approvals need it), and a page's bundler splits it into a chunk of its own.
  const {
    getBase64EncodedWireTransaction,
    getBase64Encoder,
    getTransactionDecoder,
    partiallySignTransaction,
  } = await import("@solana/kit");
  const transaction = getTransactionDecoder().decode(getBase64Encoder().encode(approval.sign.transaction));
  if (!(approval.wallet in transaction.signatures))
    throw new TypeError(`the transaction has no signature slot for ${approval.wallet}`);
  let signed: Transaction;
  if (isCryptoKeyPair(signer)) {
    signed = await partiallySignTransaction([signer], transaction);
  } else {
    if (signer.address !== approval.wallet)
      throw new TypeError(
        `the signer is ${signer.address}, but the payment must be signed by ${approval.wallet}`,
      );
    if ("signTransactions" in signer) {
      // A partial signer wants a transaction with its lifetime; it signs the message bytes only.
      const [dictionary] = await signer.signTransactions([transaction]);
      signed = {
        ...transaction,
        signatures: { ...transaction.signatures, ...(dictionary as Transaction["signatures"]) },
      };
    } else {
      const [result] = await signer.modifyAndSignTransactions([transaction]);
      if (!result) throw new Error("the wallet returned no transaction");
      signed = result as Transaction;
    }
  }
  if (!signed.signatures[approval.wallet as keyof typeof signed.signatures])
    throw new Error("the wallet did not sign the transaction");
  return { paymentId, transaction: getBase64EncodedWireTransaction(signed) };
}

/** A refusal of the payment. */
export function rejectApproval(paymentId: string): ApprovalAnswer {
  return { paymentId, reject: true };
}

/** What an approval asks, in words a person can check before signing. */
export interface ApprovalSummary {
  paymentId: string;
  wallet: string;
  chain: "evm" | "solana";
  /** How the wallet is asked: `eth_signTypedData_v4` or `signTransaction`. */
  method: string;
  expiresAt: string;
  amountUsd: string | undefined;
  amountAtomic: string | undefined;
  payTo: string | undefined;
  network: string | undefined;
  service: string;
  /**
   * Where the signed data and the update disagree (EVM: the authorization's `to`, `value` or
   * `from`). Empty when they agree; a client should refuse to sign otherwise.
   */
  mismatches: string[];
}

/** A plain decimal USD amount ("0.05", "500") in USDC's atomic units (six decimals), or undefined. */
export function usdcAtomic(usd: string): bigint | undefined {
  const parts = /^(\d{1,15})(?:\.(\d{1,6}))?$/.exec(usd.trim());
  return parts ? BigInt(parts[1] ?? "0") * 1_000_000n + BigInt((parts[2] ?? "").padEnd(6, "0")) : undefined;
}

/**
 * Where the dollars shown are not the atomic amount signed (USDC: six decimals): the person reads
 * `usd`, the wallet moves `atomic`, and a service that lies in one of them must not get a signature.
 */
function shownAmountMismatch(update: PaymentUpdate): string[] {
  const amount = update.amount;
  if (!amount) return [];
  const atomic = usdcAtomic(amount.usd);
  if (atomic !== undefined && String(atomic) === amount.atomic) return [];
  return [
    `shows $${amount.usd.slice(0, 20)}, but the amount signed is ${amount.atomic} atomic units (6 decimals)`,
  ];
}

/**
 * Describe an update awaiting approval. EVM typed data is checked against the update: a USDC
 * transfer authorization, on the update's network, of that network's USDC where it is known, of
 * its amount to its payee, valid no longer than the approval's window. A Solana transaction is
 * checked before it is signed ({@link checkSolanaApproval}: decoding it needs `@solana/kit`,
 * loaded on demand).
 */
export function describeApproval(update: PaymentUpdate): ApprovalSummary {
  const approval = requestOf(update);
  const mismatches = [
    ...shownAmountMismatch(update),
    ...(approval.sign.kind === "evm-typed-data" ? checkEvmApproval(update, approval, approval.sign) : []),
  ];
  return {
    paymentId: update.paymentId,
    wallet: approval.wallet,
    chain: approval.sign.kind === "evm-typed-data" ? "evm" : "solana",
    method: approval.sign.method,
    expiresAt: approval.expiresAt,
    amountUsd: update.amount?.usd,
    amountAtomic: update.amount?.atomic,
    payTo: update.payTo,
    network: update.network,
    service: update.service.name ?? update.service.url,
    mismatches,
  };
}
