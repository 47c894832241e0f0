import { z } from "zod/v4";
import type { Exactly, Same } from "../protocol/schema-type.js";
import type { Wallet, WalletCheck } from "../protocol/wallet.js";
import { type EvmKey, evm } from "./evm.js";
import { type SolanaKey, svm } from "./svm.js";
import type { ChainConnection, ChainFamily, LoadedKey, PaymentOnChain, Resolution } from "./types.js";

/**
 * The chain families this service pays on, registered by CAIP-2 namespace. Adding one is a module
 * beside `evm.ts` and `svm.ts` implementing `ChainFamily`, and one entry here (docs/architecture.md).
 */
export const CHAIN_FAMILIES = [evm, svm] as const;

export type ChainName = (typeof CHAIN_FAMILIES)[number]["name"];
/** The families here are exactly the wire's wallet chains (src/protocol/wallet.ts; the build fails otherwise). */
type _FamiliesMatchTheWire = Exactly<Same<ChainName, Wallet["chain"]>>;
/** A server-held key of any family (SIGNERS_FILE entries, the devnet's wallets). */
export type SignerKey = EvmKey | SolanaKey;

const byNamespace = new Map<string, ChainFamily>(CHAIN_FAMILIES.map((f) => [f.namespace, f as ChainFamily]));

/**
 * Add a family outside {@link CHAIN_FAMILIES} for its namespace (a test's toy chain,
 * src/chains/testing): networks of that namespace resolve to it until the returned function
 * removes it. Refuses a namespace already taken. Keys and wallet addresses stay those of the
 * built-in families (a family's `name` must be one of theirs).
 */
export function registerChainFamily(family: ChainFamily): () => void {
  if (byNamespace.has(family.namespace)) throw new Error(`chain namespace ${family.namespace} is taken`);
  byNamespace.set(family.namespace, family);
  return () => {
    if (byNamespace.get(family.namespace) === family) byNamespace.delete(family.namespace);
  };
}
const byName = new Map<string, ChainFamily>(CHAIN_FAMILIES.map((f) => [f.name, f as ChainFamily]));

/** The family of a CAIP-2 network id, if this service knows it. */
export function familyOf(network: string): ChainFamily | undefined {
  return byNamespace.get(network.slice(0, Math.max(0, network.indexOf(":"))));
}

/** Whether a wallet of chain `chain` can pay on `network`. */
export function walletCanUse(chain: string, network: string): boolean {
  return familyOf(network)?.name === chain;
}

/** An asset's canonical spelling on `network`, fit for a key (EVM addresses ignore case). */
export function assetKey(network: string, asset: string): string {
  return familyOf(network)?.canonicalAsset(asset) ?? asset;
}

/** Whether two assets on `network` are the same token. */
export function sameAsset(network: string, a: string, b: string): boolean {
  return assetKey(network, a) === assetKey(network, b);
}

/** Why `payTo` cannot be paid on `network` (chain-families' `payeeProblem`); undefined when it can or the family is unknown. */
export function payeeProblem(network: string, payTo: string): string | undefined {
  return familyOf(network)?.payeeProblem(payTo);
}

/** Whether two payees on `network` are the same account, as its family compares them (exact when unknown). */
export function samePayee(network: string, a: string, b: string): boolean {
  const family = familyOf(network);
  return family ? family.samePayee(a, b) : a === b;
}

export type WalletParse = { ok: true; chain: ChainName; address: string } | { ok: false; reason: string };

/** A wallet address of any family, in its canonical form, or why it is not one. */
export function parseAddress(input: string): WalletParse {
  for (const family of CHAIN_FAMILIES) {
    const parsed = family.parseAddress(input);
    if (parsed?.ok) return { ok: true, chain: family.name, address: parsed.address };
    if (parsed) return parsed;
  }
  return { ok: false, reason: "not an EVM address (0x + 40 hex) nor a Solana address (base58, 32 bytes)" };
}

/**
 * A wallet address checked in full by its family, in its canonical form, or why it is not one: the
 * `WalletCheck` the service gives src/protocol's request parsers (which know only the syntax).
 */
export const parseWallet: WalletCheck = (input) => {
  const parsed = parseAddress(input);
  return parsed.ok ? { ok: true, wallet: { chain: parsed.chain, address: parsed.address } } : parsed;
};

/** x402 v1 network names -> CAIP-2 ids, for every family. */
export function v1Networks(): Record<string, string> {
  return Object.assign({}, ...CHAIN_FAMILIES.map((f) => f.v1Networks));
}

/** USDC per network on every family, from the x402 SDK's own tables. */
export function defaultUsdc(): Record<string, string[]> {
  return Object.assign({}, ...CHAIN_FAMILIES.map((f) => f.usdc));
}

/** One SIGNERS_FILE entry, of any family. */
export const signerKeySchema: z.ZodType<SignerKey> = z.union([evm.keySchema, svm.keySchema]);

export function loadKey(key: SignerKey): Promise<LoadedKey> {
  const family = byName.get(key.chain) as ChainFamily<SignerKey> | undefined;
  if (!family) throw new Error(`no chain family ${String(key.chain)}`);
  return family.loadKey(key);
}

/** The configured networks' RPC endpoints, one connection each, made on first use. */
export interface Chains {
  balance(network: string, asset: string, owner: string): Promise<bigint>;
  /** The network's connection, for the checks that read it (undefined without an RPC URL). */
  connection(network: string): ChainConnection | undefined;
  resolve(payment: PaymentOnChain, now: Date): Promise<Resolution>;
  /**
   * A paid service's word that `transaction` settled the payment, checked on chain: its payer when
   * the chain shows it; `unconfirmed` when it does not, or cannot be read now; `unchecked` when no
   * RPC is configured for the network (nothing here can read it, the reconciler neither).
   */
  confirm(
    payment: PaymentOnChain,
    transaction: string,
  ): Promise<{ payer: string } | "unconfirmed" | "unchecked">;
  ping(network: string, signal: AbortSignal): Promise<void>;
}

export function createChains(rpcUrls: Record<string, string>): Chains {
  const connections = new Map<string, ChainConnection>();
  const connection = (network: string): ChainConnection => {
    let found = connections.get(network);
    if (!found) {
      const family = familyOf(network);
      const url = Object.hasOwn(rpcUrls, network) ? rpcUrls[network] : undefined;
      if (!family) throw new Error(`no chain family for ${network}`);
      if (!url) throw new Error(`no RPC URL configured for ${network}`);
      found = family.connect(url);
      connections.set(network, found);
    }
    return found;
  };
  return {
    balance: (network, asset, owner) => connection(network).balance(asset, owner),
    connection: (network) => (Object.hasOwn(rpcUrls, network) ? connection(network) : undefined),
    resolve: (payment, now) => connection(payment.network).resolve(payment, now),
    async confirm(payment, transaction) {
      if (!Object.hasOwn(rpcUrls, payment.network) || !familyOf(payment.network)) return "unchecked";
      try {
        return (await connection(payment.network).confirm(payment, transaction)) ?? "unconfirmed";
      } catch {
        return "unconfirmed";
      }
    },
    ping: (network, signal) => connection(network).ping(signal),
  };
}

export { type SignedMessage, verifyWalletMessage } from "./sign-in.js";
export { solanaMessageHash } from "./svm.js";
export type {
  ChainConnection,
  ChainFamily,
  LoadedKey,
  NetworkSchemes,
  PaymentOnChain,
  Resolution,
  SchemeClient,
  SigningExpectation,
  WalletAnswer,
  WalletDraft,
  WalletSigningRequest,
} from "./types.js";
export { ApprovalLapsed, ChainUnreadable, WalletAnswerMismatch, WalletCannotPay } from "./types.js";
