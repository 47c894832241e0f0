import { createKeyPairSignerFromBytes } from "@solana/kit";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { ExactEvmSchemeV1 } from "@x402/evm/v1";
import { ExactSvmScheme } from "@x402/svm/exact/client";
import { ExactSvmSchemeV1 } from "@x402/svm/v1";
import { privateKeyToAccount } from "viem/accounts";
import type { Wallet } from "../protocol/index.js";
import type { NetworkSchemes } from "./x402.js";

/**
 * Server-held keys, and who may use them. A key pays only for its own wallet, and only for requests
 * that present a bearer token bound to that wallet in configuration. Keys stay inside this module:
 * nothing here returns or logs them.
 */
export type SignerKey =
  | { chain: "evm"; privateKey: `0x${string}`; tokens: string[] }
  | { chain: "solana"; secretKey: Uint8Array; tokens: string[] };

export interface SignerAccess {
  /** The scheme clients (x402 v2 and v1) that sign for this wallet on a network (CAIP-2 id). */
  schemeFor(network: string): NetworkSchemes;
}

export type SignerLookup = { ok: true; signer: SignerAccess } | { ok: false; reason: string };

export interface SignerRegistry {
  /** Find the server-held key for a wallet, if the caller's bearer token is bound to it. */
  find(wallet: Wallet, bearerToken: string | undefined): Promise<SignerLookup>;
  /** Whether a key for this wallet exists and the token may use it (for get_budget). */
  canSign(wallet: Wallet, bearerToken: string | undefined): Promise<boolean>;
  /** Public addresses of the held keys (for start-up messages). */
  addresses(): Promise<string[]>;
}

interface Entry {
  chain: "evm" | "solana";
  address: string;
  tokens: Set<string>;
  schemeFor(network: string): NetworkSchemes;
}

export function createSignerRegistry(keys: SignerKey[], rpcUrls: Record<string, string>): SignerRegistry {
  /** One pair of scheme clients per network, built on first use with that network's RPC URL. */
  const perNetwork = (build: (rpc: { rpcUrl: string } | undefined) => NetworkSchemes) => {
    const cache = new Map<string, NetworkSchemes>();
    return (network: string): NetworkSchemes => {
      let schemes = cache.get(network);
      if (!schemes) {
        const rpcUrl = Object.hasOwn(rpcUrls, network) ? rpcUrls[network] : undefined;
        schemes = build(rpcUrl ? { rpcUrl } : undefined);
        cache.set(network, schemes);
      }
      return schemes;
    };
  };
  const entries: Promise<Entry[]> = Promise.all(
    keys.map(async (key): Promise<Entry> => {
      if (key.chain === "evm") {
        const account = privateKeyToAccount(key.privateKey);
        return {
          chain: "evm",
          address: account.address.toLowerCase(),
          tokens: new Set(key.tokens),
          // The v1 EVM scheme signs for the chain its v1 network name stands for; it reads nothing.
          schemeFor: perNetwork((rpc) => ({
            v2: new ExactEvmScheme(account, rpc),
            v1: new ExactEvmSchemeV1(account),
          })),
        };
      }
      const signer = await createKeyPairSignerFromBytes(key.secretKey);
      return {
        chain: "solana",
        address: signer.address,
        tokens: new Set(key.tokens),
        schemeFor: perNetwork((rpc) => ({
          v2: new ExactSvmScheme(signer, rpc),
          v1: new ExactSvmSchemeV1(signer, rpc),
        })),
      };
    }),
  );

  const lookup = async (wallet: Wallet, token: string | undefined): Promise<SignerLookup> => {
    const address = wallet.chain === "evm" ? wallet.address.toLowerCase() : wallet.address;
    const entry = (await entries).find((e) => e.chain === wallet.chain && e.address === address);
    if (!entry) {
      return {
        ok: false,
        reason:
          "this server holds no key for that wallet, so it cannot sign; approving payments in your own wallet is not available yet",
      };
    }
    if (!token || !entry.tokens.has(token)) {
      return {
        ok: false,
        reason:
          "the server holds a key for this wallet, but this request's bearer token is not allowed to use it",
      };
    }
    return { ok: true, signer: entry };
  };

  return {
    find: lookup,
    canSign: async (wallet, token) => (await lookup(wallet, token)).ok,
    addresses: async () => (await entries).map((e) => e.address),
  };
}
