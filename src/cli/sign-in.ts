import { privateKeyToAccount } from "viem/accounts";
import { evmSignInWallet, type SignInWallet, solanaSignInWallet } from "../client/index.js";
import type { CliOptions } from "./args.js";
import type { LocalKey } from "./keys.js";

/**
 * `chat payments` without a bearer token but with a wallet's key (`--key-file`, or the devnet's
 * `user` wallet) signs in with that wallet (docs/clients.md, "Signing in with a wallet") and lists
 * the payments made from it. The key stays in this process; only the signature of the sign-in
 * message leaves it.
 */

/** The chain a key file's wallet names when it signs in: mainnet's id (an EOA's signature holds on any). */
const DEFAULT_CHAIN = { evm: "eip155:1", solana: "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp" } as const;

/** Where the embedded devnet's service hands out its `user` test wallets (src/http/devnet-wallet.ts). */
const DEVNET_WALLETS_PATH = "/api/devnet/wallets";

export function keyWallet(key: LocalKey, chainId?: string): SignInWallet {
  return key.chain === "evm"
    ? evmSignInWallet(key.account, chainId ?? DEFAULT_CHAIN.evm)
    : solanaSignInWallet(key.signer, chainId ?? DEFAULT_CHAIN.solana);
}

/** The devnet's `user` EVM wallet, from the running service (published test keys of local chains). */
async function devnetUserWallet(url: string): Promise<SignInWallet> {
  const response = await fetch(new URL(DEVNET_WALLETS_PATH, url)).catch(() => undefined);
  const body = (await response?.json().catch(() => undefined)) as
    | { evm?: { network?: unknown; privateKey?: unknown } | null }
    | undefined;
  const evm = body?.evm;
  if (!response?.ok || typeof evm?.privateKey !== "string" || typeof evm.network !== "string")
    throw new Error(`--devnet user: ${url} hands out no devnet wallet (is it the devnet's service?)`);
  return evmSignInWallet(privateKeyToAccount(evm.privateKey as `0x${string}`), evm.network);
}

/**
 * The wallet `payments` signs in with (the key file's, already read, else `--devnet user`'s), or
 * undefined when it lists by bearer token (or not at all).
 */
export async function signInWallet(
  options: CliOptions,
  key: LocalKey | undefined,
): Promise<SignInWallet | undefined> {
  if (options.token) return undefined;
  if (key) return keyWallet(key);
  return options.devnetUser ? devnetUserWallet(options.url) : undefined;
}
