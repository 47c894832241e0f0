import type { x402Client } from "@x402/core/client";
import type { PaymentPayload } from "@x402/core/types";
import type { z } from "zod/v4";

/**
 * The chain port: everything the service does that depends on a chain family (address format,
 * token balance, keys and their x402 scheme clients, what a signed payment must match, how an
 * unclear payment is resolved), behind one interface. A family is registered by its CAIP-2
 * namespace in `index.ts`, as x402 registers its mechanisms; nothing outside `src/chains` branches
 * on a chain. docs/architecture.md says how to add one.
 */

/** Any scheme client the x402 SDK accepts for `register` (EVM or SVM exact). */
export type SchemeClient = Parameters<x402Client["register"]>[1];

/** The scheme clients that sign for one key on one network: x402 v2, and v1 for sellers still on v1. */
export interface NetworkSchemes {
  v2: SchemeClient;
  v1: SchemeClient;
}

/** What a signed payment must match: what policy checked, and the window that was signed. */
export interface SigningExpectation {
  amount: bigint;
  payTo: string;
  /** The token quoted (its contract or mint): a family whose payload names it checks it. */
  asset: string;
  maxTimeoutSeconds: number;
}

/** An unclear payment, as the chain needs it to say what happened. */
export interface PaymentOnChain {
  network: string;
  asset: string;
  /** The paying wallet. */
  wallet: string;
  /** What `authorization()` returned when it was signed. */
  authorization: unknown;
  /** When the payment was recorded: it cannot have landed before (rows older than a chain's own field). */
  createdAt?: Date;
}

/** The chain's word on an unclear payment. */
export type Resolution =
  | { status: "settled"; txHash?: string; payer: string }
  | { status: "failed"; error: string }
  /** It may still land (or the chain cannot tell yet). */
  | { status: "pending" };

/** A server-held key, loaded: the wallet it signs for, and its scheme clients per network. */
export interface LoadedKey {
  /** Canonical address (as `parseAddress` returns it). */
  address: string;
  schemesFor(network: string, rpcUrl: string | undefined): NetworkSchemes;
}

/**
 * What the user's own wallet signs to approve a payment (the `p:` update's `approval.sign`,
 * docs/protocol.md "Approval"): EIP-712 typed data for `eth_signTypedData_v4`, or a Solana
 * transaction for a Wallet Standard `signTransaction`. Plain JSON, no secret.
 */
export type WalletSigningRequest =
  | {
      kind: "evm-typed-data";
      method: "eth_signTypedData_v4";
      typedData: {
        domain: Record<string, unknown>;
        types: Record<string, Array<{ name: string; type: string }>>;
        primaryType: string;
        message: Record<string, unknown>;
      };
    }
  | { kind: "solana-transaction"; method: "signTransaction"; transaction: string };

/** The wallet's answer, as the resume request carried it. */
export type WalletAnswer = { signature: `0x${string}` } | { transaction: string };

/**
 * A payment for a wallet whose key the service does not hold: the x402 SDK's own scheme clients,
 * given a stand-in signer that records what the wallet must sign instead of signing. The payload
 * they build is complete but for the wallet's signature.
 */
export interface WalletDraft {
  schemes: NetworkSchemes;
  /** What the wallet must sign, read from the payload the schemes built (and what they recorded). */
  request(payload: PaymentPayload): WalletSigningRequest;
  /** Unix seconds after which the wallet's signature can no longer be used to pay. */
  expiresAt(payload: PaymentPayload, nowSeconds: number): number;
  /**
   * Before the wallet is asked: throws {@link WalletCannotPay} when it could never pay `asset`
   * with its own signature (EVM: a contract wallet and a token without EIP-1271), or
   * {@link ChainUnreadable}. Absent where no such case exists (Solana).
   */
  assertCanPay?(asset: string): Promise<void>;
}

/** The wallet's answer does not sign exactly the stored request with the wallet's key. */
export class WalletAnswerMismatch extends Error {
  override name = "WalletAnswerMismatch";
}

/**
 * Why a wallet cannot pay with its own signature, whatever it signs: `contract_wallet_unsupported`
 * (a smart-contract wallet, and a token that only accepts an EOA's signature),
 * `wallet_not_deployed` (an EIP-6492 signature of a contract wallet not yet on chain). The message
 * is for the user; it holds no secret.
 */
export class WalletCannotPay extends Error {
  override name = "WalletCannotPay";
  constructor(
    readonly reason: "contract_wallet_unsupported" | "wallet_not_deployed",
    message: string,
  ) {
    super(message);
  }
}

/**
 * The wallet signed in time for the window shown, but what it signed can no longer land (Solana: the
 * transaction's recent blockhash has expired on chain): nothing is sent, the approval has lapsed.
 */
export class ApprovalLapsed extends Error {
  override name = "ApprovalLapsed";
}

/** The network's RPC did not answer a read a check needs: nothing was decided, try again. */
export class ChainUnreadable extends Error {
  override name = "ChainUnreadable";
}

/**
 * Approval checks that read the chain (EVM: smart-contract wallets, EIP-1271 and EIP-6492).
 * Both throw {@link ChainUnreadable} when the RPC does not answer, never a verdict.
 */
export interface WalletChecks {
  /** Throws {@link WalletCannotPay} when `wallet` cannot pay `asset` with its own signature. */
  assertCanPay(asset: string, wallet: string): Promise<void>;
  /** Whether `signature` is `wallet`'s over the typed data, as the chain judges it. */
  verifyTypedData(
    typedData: Extract<WalletSigningRequest, { kind: "evm-typed-data" }>["typedData"],
    signature: `0x${string}`,
    wallet: string,
  ): Promise<boolean>;
  /** Whether there is code at `wallet` (a deployed contract wallet). */
  isContract(wallet: string): Promise<boolean>;
}

/** Calls to one network's RPC endpoint. */
export interface ChainConnection {
  /** Token balance of `owner` in atomic units. */
  balance(asset: string, owner: string): Promise<bigint>;
  resolve(payment: PaymentOnChain, now: Date): Promise<Resolution>;
  /**
   * Whether `transaction` (as a paid service's settlement response names it) is this payment,
   * landed and succeeded: its payer if so, else undefined. Throws when the RPC does not answer.
   */
  confirm(payment: PaymentOnChain, transaction: string): Promise<{ payer: string } | undefined>;
  /** One cheap call that proves the endpoint answers (readiness). */
  ping(signal: AbortSignal): Promise<void>;
  /** What approvals read from this chain (EVM); absent where answers are checked offline. */
  wallets?: WalletChecks;
  /** Solana: whether a transaction carrying this recent blockhash can still land. */
  blockhashValid?(blockhash: string): Promise<boolean>;
  /**
   * What an `exact` offer's `extra` holds for this asset, read from the chain (EVM: the token's
   * EIP-712 `name` and `version`); absent where the family needs none of its own (tabs use it).
   */
  transferExtra?(asset: string): Promise<Record<string, unknown>>;
  /**
   * A tab's funding and return as transactions the service builds and sends itself, where an x402
   * `exact` payment through a facilitator cannot do them (Solana: a transfer's receiver must already
   * have a token account, and the `exact` scheme cannot open one). Absent where `exact` suffices.
   */
  own?: OwnTransfers;
}

/** What a transaction the service sent itself came to. */
export type Sent =
  | { kind: "landed"; transaction: string }
  /** Refused before it could move anything (or failed on chain, having moved nothing but a fee). */
  | { kind: "rejected"; error: string }
  /** Sent, or maybe sent, with no word from the chain yet: it decides later (`resolve`). */
  | { kind: "unclear"; error: string };

/** Transfers a tab needs that are not x402 payments (see {@link ChainConnection.own}). */
export interface OwnTransfers {
  /**
   * The unsigned transaction (base64 wire) by which `from`, its fee payer, opens `to`'s token
   * account of `asset`, moves `amount` into it, and leaves `to` what its own return will cost; all
   * of that but the fees comes back with {@link OwnTransfers.returnAll}.
   */
  funding(from: string, to: string, asset: string, amount: bigint, memo: string): Promise<string>;
  /**
   * Everything the key made from `seed` holds (its tokens of `asset`, its token account's rent,
   * its own balance) back to `to`, signed by it; undefined when it holds nothing.
   */
  returnAll(
    seed: Uint8Array,
    to: string,
    asset: string,
    memo: string,
  ): Promise<{ transaction: string; amount: bigint } | undefined>;
  /** Send a signed transaction (base64 wire) and wait for the chain's word. */
  send(transaction: string): Promise<Sent>;
}

export type AddressParse = { ok: true; address: string } | { ok: false; reason: string };

export interface ChainFamily<Key extends { chain: string } = { chain: string }> {
  /** The `chain` of its wallets (`Wallet["chain"]`) and of its keys in SIGNERS_FILE. */
  readonly name: Key["chain"];
  /** The CAIP-2 namespace of its networks ("eip155", "solana"). */
  readonly namespace: string;
  /** x402 v1 network names of its networks -> CAIP-2 ids, from the SDK's own v1 tables. */
  readonly v1Networks: Readonly<Record<string, string>>;
  /** USD stablecoins with 6 decimals signed by plain transfer, per network, from the x402 SDK's tables. */
  readonly usdc: Readonly<Record<string, string[]>>;
  /** The canonical address, a reason it is not a valid one, or undefined when the text is not of this family's shape. */
  parseAddress(input: string): AddressParse | undefined;
  /**
   * Why an offer's `payTo` cannot receive this family's transfer (not an address of its shape,
   * the zero address, a program), or undefined when it can. Unlike a wallet, a payee need not
   * be able to sign (a Solana program-derived address may own a token account).
   */
  payeeProblem(payTo: string): string | undefined;
  /** An asset id's canonical spelling: two ids name the same token when these are equal. */
  canonicalAsset(asset: string): string;
  /**
   * Whether two payee addresses name the same account (docs/payments.md#approval): EVM compares
   * hex case-insensitively (an EIP-55 checksum is only spelling), base58 compares exactly.
   */
  samePayee(a: string, b: string): boolean;
  /** One SIGNERS_FILE entry of this family (errors must never echo key material). */
  readonly keySchema: z.ZodType<Key>;
  loadKey(key: Key): Promise<LoadedKey>;
  /**
   * A key made from 32 random-looking bytes (a tab's session key, derived per tab: src/payments/tabs);
   * absent where the family cannot hold tabs yet.
   */
  keyFromSeed?(seed: Uint8Array): Key;
  connect(rpcUrl: string): ChainConnection;
  /**
   * Check that a signed payload is exactly what was quoted, and return what the reconciler needs
   * to resolve it later (never the signature). Throws when it differs.
   */
  authorization(
    payload: PaymentPayload,
    expected: SigningExpectation,
    nowSeconds: number,
  ): Record<string, string>;
  /** Build payments the wallet at `address` signs itself (approval in the user's wallet). */
  draftForWallet(address: string, network: string, rpcUrl: string | undefined): WalletDraft;
  /**
   * Check that the wallet's answer signs exactly `request` for `wallet`, and return the unsigned
   * `payload` completed with it. Throws WalletAnswerMismatch otherwise; WalletCannotPay when the
   * signature holds but could not move the funds; ChainUnreadable when `chain` (the payment's
   * network, for families that verify on chain) does not answer.
   */
  completeForWallet(
    payload: PaymentPayload,
    request: WalletSigningRequest,
    answer: WalletAnswer,
    wallet: string,
    chain: ChainConnection | undefined,
  ): Promise<PaymentPayload>;
}
