import {
  familyOf,
  loadKey,
  type NetworkSchemes,
  type SignerKey,
  type WalletDraft,
} from "../../chains/index.js";
import type { Wallet } from "../../protocol/index.js";
import type { Payer } from "./payer.js";

/**
 * Server-held keys, and who may use them. A key pays only for its own wallet, and only for requests
 * that present a bearer token bound to that wallet in configuration, or (on the devnet only,
 * `grantsMaySign`) an operator key bound to that wallet (docs/deploy.md#operating-it). Keys stay
 * inside this module and their chain family's scheme clients: nothing here returns or logs them.
 */
export type { SignerKey } from "../../chains/index.js";

export interface SignerAccess {
  /** The scheme clients (x402 v2 and v1) that sign for this wallet on a network (CAIP-2 id). */
  schemeFor(network: string): NetworkSchemes;
}

export type SignerLookup = { ok: true; signer: SignerAccess } | { ok: false; reason: string };

/** Who asks to sign: the request's bearer token and, for an operator key, its grant. */
export type SignerCaller = Pick<Payer, "bearerToken" | "grant">;

export interface SignerRegistry {
  /** Find the server-held key for a wallet, if the caller's bearer token (or key) is bound to it. */
  find(wallet: Wallet, who: SignerCaller): Promise<SignerLookup>;
  /** Whether a key for this wallet exists and the caller may use it (for get_budget). */
  canSign(wallet: Wallet, who: SignerCaller): Promise<boolean>;
  /**
   * For a wallet that signs for itself (approval): the SDK's scheme clients for `network`, with a
   * stand-in signer that records what the wallet must sign.
   */
  draftFor(wallet: Wallet, network: string): WalletDraft;
}

interface Entry extends SignerAccess {
  chain: string;
  address: string;
  tokens: Set<string>;
}

export interface SignerRegistryOptions {
  /**
   * An operator key whose wallets include a held key's wallet may sign with it, as the dev token
   * does: the embedded devnet only, whose keys are published test keys.
   */
  grantsMaySign?: boolean;
}

/** Whether a grant names this wallet (EVM addresses compare case-insensitively). */
function grantNames(grant: SignerCaller["grant"], address: string): boolean {
  const norm = (w: string) => (w.startsWith("0x") ? w.toLowerCase() : w);
  return grant?.wallets?.some((w) => norm(w) === norm(address)) ?? false;
}

export function createSignerRegistry(
  keys: SignerKey[],
  rpcUrls: Record<string, string>,
  options: SignerRegistryOptions = {},
): SignerRegistry {
  const entries: Promise<Entry[]> = Promise.all(
    keys.map(async (key): Promise<Entry> => {
      const loaded = await loadKey(key);
      // One pair of scheme clients per network, built on first use with that network's RPC URL.
      const cache = new Map<string, NetworkSchemes>();
      return {
        chain: key.chain,
        address: loaded.address,
        tokens: new Set(key.tokens),
        schemeFor(network) {
          let schemes = cache.get(network);
          if (!schemes) {
            schemes = loaded.schemesFor(
              network,
              Object.hasOwn(rpcUrls, network) ? rpcUrls[network] : undefined,
            );
            cache.set(network, schemes);
          }
          return schemes;
        },
      };
    }),
  );

  // Wallet addresses arrive canonical (src/chains parses them), as loaded keys' addresses are.
  const lookup = async (wallet: Wallet, who: SignerCaller): Promise<SignerLookup> => {
    const entry = (await entries).find((e) => e.chain === wallet.chain && e.address === wallet.address);
    if (!entry) {
      return {
        ok: false,
        reason: "this server holds no key for that wallet, so it cannot sign",
      };
    }
    const token = who.bearerToken;
    const byToken = token !== undefined && entry.tokens.has(token);
    const byGrant = options.grantsMaySign === true && grantNames(who.grant, entry.address);
    if (!byToken && !byGrant) {
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
    canSign: async (wallet, who) => (await lookup(wallet, who)).ok,
    draftFor(wallet, network) {
      const family = familyOf(network);
      if (!family) throw new Error(`no chain family for ${network}`);
      return family.draftForWallet(
        wallet.address,
        network,
        Object.hasOwn(rpcUrls, network) ? rpcUrls[network] : undefined,
      );
    },
  };
}
