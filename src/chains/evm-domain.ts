import { getAddress, type PublicClient, parseAbi } from "viem";
import { evmPublicClient } from "./evm-wallets.js";
import { wrapScheme } from "./scheme-wrap.js";
import type { NetworkSchemes, SchemeClient } from "./types.js";

/**
 * An EIP-3009 authorization is signed over the token's EIP-712 domain, which the x402 SDK takes
 * from the offer's `extra` (`name`, `version`) as given. A seller naming another domain gets a
 * signature the token never accepts: nothing can settle it, and the payment's budget is held until
 * its window ends. So the domain is read from the token itself and an offer naming another is not
 * signed (docs/payments.md, "Which offer is paid").
 */

const DOMAIN_ABI = parseAbi([
  "function name() view returns (string)",
  "function version() view returns (string)",
]);

/**
 * A token's address as viem reads one. An offer may spell it in any hex case (the allow-list
 * compares without case) and the row keeps it as offered; viem refuses a mixed case that is not
 * the checksum (all capitals, say), which left such a payment unresolved for good (a black-box run).
 */
export const contractAddress = (address: string): `0x${string}` => getAddress(address.toLowerCase());

export interface TokenDomain {
  name: string;
  version: string;
}

/** How long a token's domain read from chain is reused (a proxy upgrade may rename a token). */
const DOMAIN_TTL_MS = 10 * 60_000;

/** The token's `name()` and `version()`, as its EIP-712 domain uses them. */
export async function readTokenDomain(client: PublicClient, asset: string): Promise<TokenDomain> {
  const token = { address: contractAddress(asset), abi: DOMAIN_ABI } as const;
  const [name, version] = await Promise.all([
    client.readContract({ ...token, functionName: "name" }),
    client.readContract({ ...token, functionName: "version" }),
  ]);
  return { name, version };
}

/** `read`, remembered per token for {@link DOMAIN_TTL_MS}; a failed read is not remembered. */
export function cachedDomains(
  read: (asset: string) => Promise<TokenDomain>,
  now: () => number = Date.now,
): (asset: string) => Promise<TokenDomain> {
  const cache = new Map<string, { at: number; domain: Promise<TokenDomain> }>();
  return (asset) => {
    const key = asset.toLowerCase();
    const hit = cache.get(key);
    if (hit && now() - hit.at < DOMAIN_TTL_MS) return hit.domain;
    const domain = read(asset);
    cache.set(key, { at: now(), domain });
    domain.catch(() => {
      if (cache.get(key)?.domain === domain) cache.delete(key);
    });
    return domain;
  };
}

/** Text from a hostile offer, bounded and quoted for an error message. */
function quoted(value: unknown): string {
  return JSON.stringify(typeof value === "string" ? value.slice(0, 64) : (value ?? null));
}

/** `scheme`, refusing to sign an offer whose `extra` names a domain other than the token's own. */
export function tokenDomainChecked(
  scheme: SchemeClient,
  domainOf: (asset: string) => Promise<TokenDomain>,
): SchemeClient {
  return wrapScheme(scheme, async (inner, version, requirements, context) => {
    const token = await domainOf(requirements.asset);
    const extra = requirements.extra ?? {};
    if (extra.name !== token.name || extra.version !== token.version) {
      throw new Error(
        `the offer names the EIP-712 domain ${quoted(extra.name)} version ${quoted(extra.version)}, ` +
          `the token's is ${quoted(token.name)} version ${quoted(token.version)}`,
      );
    }
    return inner(version, requirements, context);
  });
}

/** One cached reader per RPC URL, shared by every key and draft on that chain. */
const readers = new Map<string, (asset: string) => Promise<TokenDomain>>();

/**
 * The v2 and v1 schemes, each checking the offer's domain against the token's on the chain at
 * `rpcUrl`. Without an RPC URL nothing can be read (and nothing paid there can be reconciled): as given.
 */
export function withTokenDomain(schemes: NetworkSchemes, rpcUrl: string | undefined): NetworkSchemes {
  if (rpcUrl === undefined) return schemes;
  let domainOf = readers.get(rpcUrl);
  if (!domainOf) {
    const client = evmPublicClient(rpcUrl);
    domainOf = cachedDomains((asset) => readTokenDomain(client, asset));
    readers.set(rpcUrl, domainOf);
  }
  return { v2: tokenDomainChecked(schemes.v2, domainOf), v1: tokenDomainChecked(schemes.v1, domainOf) };
}
