import { createKeyPairFromBytes, signBytes } from "@solana/kit";
import { privateKeyToAccount } from "viem/accounts";
import { base58, evmSignInWallet, signEvmApproval, signSolanaApproval } from "../../../src/client/index.js";
import type { PageWallet, WalletOption } from "./types.js";

/** What `GET /api/devnet/wallets` answers while the embedded local network runs (src/http/devnet-wallet.ts). */
export interface DevnetWallets {
  notice: string;
  evm: { name: string; network: string; chainId: number; address: string; privateKey: `0x${string}` } | null;
  solana: { name: string; network: string; address: string; secretKey: number[] } | null;
}

/** The devnet's funded test wallets, or none when the service pays on real networks (no route there). */
export async function fetchDevnetWallets(): Promise<DevnetWallets | undefined> {
  try {
    const response = await fetch("/api/devnet/wallets", { headers: { Accept: "application/json" } });
    if (!response.ok) return undefined;
    return (await response.json()) as DevnetWallets;
  } catch {
    return undefined;
  }
}

/**
 * The "devnet wallet": the local network's published test keys, signing here in the page, so a
 * newcomer without a wallet extension can approve a payment. Their money is simulated.
 */
export function devnetOptions(wallets: DevnetWallets): WalletOption[] {
  const options: WalletOption[] = [];
  const { evm, solana } = wallets;
  if (evm) {
    options.push({
      id: "devnet:evm",
      name: "Devnet wallet (EVM)",
      chain: "evm",
      source: "devnet",
      async connect(): Promise<PageWallet> {
        const account = privateKeyToAccount(evm.privateKey);
        return {
          optionId: "devnet:evm",
          name: "Devnet wallet (EVM)",
          chain: "evm",
          address: account.address,
          approve: (payment) => signEvmApproval(payment, account),
          signIn: evmSignInWallet(account, evm.network),
        };
      },
    });
  }
  if (solana) {
    options.push({
      id: "devnet:solana",
      name: "Devnet wallet (Solana)",
      chain: "solana",
      source: "devnet",
      async connect(): Promise<PageWallet> {
        const keyPair = await createKeyPairFromBytes(new Uint8Array(solana.secretKey));
        return {
          optionId: "devnet:solana",
          name: "Devnet wallet (Solana)",
          chain: "solana",
          address: solana.address,
          approve: (payment) => signSolanaApproval(payment, keyPair),
          signIn: {
            address: solana.address,
            chainId: solana.network,
            signMessage: async (message) =>
              base58(await signBytes(keyPair.privateKey, new TextEncoder().encode(message))),
          },
        };
      },
    });
  }
  return options;
}
