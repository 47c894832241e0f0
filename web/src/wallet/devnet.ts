import { createKeyPairFromBytes, signBytes } from "@solana/kit";
import { privateKeyToAccount } from "viem/accounts";
import { base58, evmSignInWallet, signEvmApproval, signSolanaApproval } from "../../../src/client/index.js";
import type { PageWallet, WalletOption } from "./types.js";

export { type DevnetWallets, fetchDevnetWallets } from "./useDevnet.js";

import type { DevnetWallets } from "./useDevnet.js";

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
