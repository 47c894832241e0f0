import type { PaymentUpdate } from "../protocol/stream.js";
import {
  describeApproval,
  type EvmTypedDataSigner,
  type SolanaApprovalSigner,
  signEvmApproval,
  signSolanaApproval,
} from "./approval.js";
import { type AwaitingUpdate, isAwaiting } from "./payment-tool.js";
import type { ApprovalAnswer } from "./request.js";
import { checkSolanaApproval } from "./solana-payment.js";

/**
 * The wallet `PaymentChatTransport` signs approvals with when a `useChat` UI answers a payment's
 * tool-approval part (`addToolApprovalResponse({ id, approved: true })`). It signs exactly what the
 * service's `p:` update asked (`approval.sign`), never anything built here, and refuses to sign
 * typed data that disagrees with the quoted amount, payee or payer.
 */

/** An EIP-1193 provider (`window.ethereum`, an EIP-6963 wallet's `provider`). */
export interface Eip1193Provider {
  request(args: { method: string; params?: readonly unknown[] }): Promise<unknown>;
}

/** Signs a Solana approval's transaction: the base64 wire transaction in, the signed one (base64) out. */
export type SolanaTransactionSignFunction = (transaction: string, update: AwaitingUpdate) => Promise<string>;

/** Anything that answers an approval: signs it (or declines it) and resolves to the answer to send. */
export type ApprovalSignFunction = (update: AwaitingUpdate) => Promise<ApprovalAnswer>;

/** One wallet per chain family; a payment of a family with none fails its tool part, unpaid. */
export interface WalletSigners {
  /**
   * An EIP-1193 provider (asked `eth_signTypedData_v4` with the typed data exactly as the service
   * sent it, after `wallet_switchEthereumChain` when the wallet is on another chain), or a viem
   * account or wallet client (`signEvmApproval`).
   */
  evm?: Eip1193Provider | EvmTypedDataSigner;
  /**
   * A `@solana/kit` signer (a `KeyPairSigner`, a Wallet Standard signer), a `CryptoKeyPair`
   * (`signSolanaApproval`), or a function that has the wallet sign the base64 transaction (a
   * Wallet Standard `solana:signTransaction` in three lines, docs/clients.md).
   */
  solana?: SolanaApprovalSigner | SolanaTransactionSignFunction;
}

/** The transport's `signer` option: wallets by chain family, or a function that answers. */
export type TransportSigner = WalletSigners | ApprovalSignFunction;

/** Signing did not happen (no wallet for the chain, the wallet declined or failed, a mismatch). */
export class ApprovalSigningError extends Error {
  override name = "ApprovalSigningError";
  /** What to sign disagrees with the quote: it is never signed, so it is not asked again. */
  readonly mismatch: boolean;
  constructor(message: string, { mismatch = false }: { mismatch?: boolean } = {}) {
    super(message);
    this.mismatch = mismatch;
  }
}

/** The wallet's words for a refusal: EIP-1193 code 4001 is the user declining. */
export function signingErrorText(error: unknown): string {
  const {
    code,
    message: own,
    cause,
  } = (typeof error === "object" && error !== null ? error : {}) as {
    code?: unknown;
    message?: unknown;
    cause?: { code?: unknown } | null;
  };
  // EIP-1193 errors are often plain objects `{ code, message }`, not Errors; viem wraps them (cause).
  const message = typeof own === "string" ? own : String(error);
  if (code === 4001 || cause?.code === 4001) return "The wallet declined to sign the payment.";
  return error instanceof ApprovalSigningError
    ? message
    : `The wallet could not sign the payment: ${message}`;
}

/**
 * Asked as an EIP-1193 provider (switched to the payment's chain, then `eth_signTypedData_v4`):
 * a provider, and a viem wallet client over a wallet (its `request` reaches the wallet). A wallet
 * client holding a local account signs as viem does: its transport may reach no wallet at all.
 */
function isProvider(signer: Eip1193Provider | EvmTypedDataSigner): signer is Eip1193Provider {
  const local = (signer as { account?: { type?: unknown } }).account?.type === "local";
  return typeof (signer as Partial<Eip1193Provider>).request === "function" && !local;
}

async function signWithProvider(provider: Eip1193Provider, update: AwaitingUpdate): Promise<ApprovalAnswer> {
  const sign = update.approval.sign;
  if (sign.kind !== "evm-typed-data")
    throw new ApprovalSigningError("this payment asks for no EVM signature");
  const chainId = sign.typedData.domain.chainId;
  if (typeof chainId === "number" || typeof chainId === "string") {
    const wanted = BigInt(chainId);
    const current = await provider.request({ method: "eth_chainId" });
    if (typeof current !== "string" || BigInt(current) !== wanted)
      await provider.request({
        method: "wallet_switchEthereumChain",
        params: [{ chainId: `0x${wanted.toString(16)}` }],
      });
  }
  const signature = await provider.request({
    method: "eth_signTypedData_v4",
    params: [update.approval.wallet, JSON.stringify(sign.typedData)],
  });
  if (typeof signature !== "string" || !/^0x[0-9a-fA-F]{2,8192}$/.test(signature))
    throw new ApprovalSigningError("The wallet returned no signature.");
  return { paymentId: update.paymentId, signature: signature as `0x${string}` };
}

/** A Solana transaction signed by a function: the same message, with the wallet's signature in it. */
async function signWithFunction(
  sign: SolanaTransactionSignFunction,
  update: AwaitingUpdate,
): Promise<ApprovalAnswer> {
  const request = update.approval.sign;
  if (request.kind !== "solana-transaction")
    throw new ApprovalSigningError("this payment asks for no Solana transaction");
  const signed = await sign(request.transaction, update);
  if (typeof signed !== "string" || signed === "")
    throw new ApprovalSigningError("The wallet returned no transaction.");
  const { getBase64Encoder, getTransactionDecoder } = await import("@solana/kit");
  const decode = (base64: string) => getTransactionDecoder().decode(getBase64Encoder().encode(base64));
  const before = decode(request.transaction);
  const after = decode(signed);
  const same =
    before.messageBytes.length === after.messageBytes.length &&
    before.messageBytes.every((byte, i) => after.messageBytes[i] === byte);
  if (!same) throw new ApprovalSigningError("The wallet changed the transaction: it is not sent.");
  if (!after.signatures[update.approval.wallet as keyof typeof after.signatures])
    throw new ApprovalSigningError(`The transaction carries no signature of ${update.approval.wallet}.`);
  return { paymentId: update.paymentId, transaction: signed };
}

async function signWithWallets(wallets: WalletSigners, update: AwaitingUpdate): Promise<ApprovalAnswer> {
  if (update.approval.sign.kind === "evm-typed-data") {
    if (!wallets.evm) throw new ApprovalSigningError("No EVM wallet was given to sign this payment.");
    return isProvider(wallets.evm)
      ? signWithProvider(wallets.evm, update)
      : signEvmApproval(update, wallets.evm, update.paymentId);
  }
  if (!wallets.solana) throw new ApprovalSigningError("No Solana wallet was given to sign this payment.");
  return typeof wallets.solana === "function"
    ? signWithFunction(wallets.solana, update)
    : signSolanaApproval(update, wallets.solana, update.paymentId);
}

/**
 * Have the signer answer a payment awaiting approval. Refuses (ApprovalSigningError) typed data or a
 * Solana transaction that disagrees with the quote (`describeApproval`, `checkSolanaApproval`), an
 * update that awaits no approval, and an answer for another payment or of the wrong kind. `tabFunding`: the update is a tab's opening
 * (`awaitingOf`), whose Solana transaction `checkSolanaFunding` checked when it was opened.
 */
export async function signApproval(
  signer: TransportSigner,
  awaiting: PaymentUpdate,
  { tabFunding = false }: { tabFunding?: boolean } = {},
): Promise<ApprovalAnswer> {
  if (!isAwaiting(awaiting))
    throw new ApprovalSigningError("This payment awaits no approval: nothing to sign.");
  const update: AwaitingUpdate = awaiting;
  const mismatches = [
    ...describeApproval(update).mismatches,
    ...(tabFunding ? [] : await checkSolanaApproval(update)),
  ];
  if (mismatches.length > 0)
    throw new ApprovalSigningError(
      `Not signed: the data to sign disagrees with the quote (${mismatches.join("; ")}).`,
      { mismatch: true },
    );
  const answer = typeof signer === "function" ? await signer(update) : await signWithWallets(signer, update);
  if (answer?.paymentId !== update.paymentId)
    throw new ApprovalSigningError("The signer answered another payment: nothing is sent.");
  if ("reject" in answer) return answer;
  const evm = update.approval.sign.kind === "evm-typed-data";
  if (evm ? !("signature" in answer) : !("transaction" in answer))
    throw new ApprovalSigningError("The signer's answer is not of the kind this payment asks for.");
  return answer;
}
