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

/** Calls to one network's RPC endpoint. */
export interface ChainConnection {
  /** Token balance of `owner` in atomic units. */
  balance(asset: string, owner: string): Promise<bigint>;
  resolve(payment: PaymentOnChain, now: Date): Promise<Resolution>;
  /** One cheap call that proves the endpoint answers (readiness). */
  ping(signal: AbortSignal): Promise<void>;
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
  /** Whether two asset ids name the same token. */
  sameAsset(a: string, b: string): boolean;
  /** One SIGNERS_FILE entry of this family (errors must never echo key material). */
  readonly keySchema: z.ZodType<Key>;
  loadKey(key: Key): Promise<LoadedKey>;
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
}
