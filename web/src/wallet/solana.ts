import {
  SolanaSignMessage,
  type SolanaSignMessageFeature,
  SolanaSignTransaction,
  type SolanaSignTransactionFeature,
} from "@solana/wallet-standard-features";
import { getWallets } from "@wallet-standard/app";
import type { IdentifierString, Wallet, WalletAccount } from "@wallet-standard/base";
import { StandardConnect, type StandardConnectFeature } from "@wallet-standard/features";
import { base58, type SignInWallet } from "../../../src/client/index.js";
import { base64ToBytes, bytesToBase64 } from "./encoding.js";
import type { PageWallet, WalletOption } from "./types.js";

/** CAIP-2 Solana networks (genesis hash prefixes) as Wallet Standard chains; others are local. */
const STANDARD_CHAINS: Record<string, IdentifierString> = {
  "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp": "solana:mainnet",
  "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1": "solana:devnet",
  "solana:4uhcVJyU9pJkvQyS88uRDiswHXSCkY3z": "solana:testnet",
};

export function standardChainOf(network: string | undefined): IdentifierString {
  return (network ? STANDARD_CHAINS[network] : undefined) ?? "solana:localnet";
}

type SigningWallet = Wallet & {
  features: StandardConnectFeature & SolanaSignTransactionFeature;
};

function canSign(wallet: Wallet): wallet is SigningWallet {
  return (
    StandardConnect in wallet.features &&
    SolanaSignTransaction in wallet.features &&
    wallet.chains.some((chain) => chain.startsWith("solana:"))
  );
}

/** Signing in, when the wallet signs messages (`solana:signMessage`): on mainnet's chain id. */
function signInOf(wallet: SigningWallet, account: WalletAccount): SignInWallet | undefined {
  const feature = (wallet.features as Partial<SolanaSignMessageFeature>)[SolanaSignMessage];
  if (!feature) return undefined;
  return {
    address: account.address,
    chainId: "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp",
    async signMessage(message) {
      const [signed] = await feature.signMessage({ account, message: new TextEncoder().encode(message) });
      if (!signed) throw new Error(`${wallet.name} returned no signature`);
      return base58(signed.signature);
    },
  };
}

async function connectStandard(wallet: SigningWallet, optionId: string): Promise<PageWallet> {
  const { accounts } = await wallet.features[StandardConnect].connect();
  const account: WalletAccount | undefined =
    accounts.find((a) => a.chains.some((c) => c.startsWith("solana:"))) ?? accounts[0];
  if (!account) throw new Error(`${wallet.name} shared no account`);
  const signIn = signInOf(wallet, account);
  return {
    ...(signIn ? { signIn } : {}),
    optionId,
    name: wallet.name,
    icon: wallet.icon,
    chain: "solana",
    address: account.address,
    async approve(payment, { local }) {
      const sign = payment.approval?.sign;
      if (sign?.kind !== "solana-transaction") throw new Error("this payment asks for no Solana transaction");
      const [signed] = await wallet.features[SolanaSignTransaction].signTransaction({
        account,
        transaction: base64ToBytes(sign.transaction),
        chain: local ? "solana:localnet" : standardChainOf(payment.network),
      });
      if (!signed) throw new Error(`${wallet.name} returned no transaction`);
      return { paymentId: payment.paymentId, transaction: bytesToBase64(signed.signedTransaction) };
    },
  };
}

/** Solana wallets registered through the Wallet Standard that can sign a transaction. */
export function discoverSolanaWallets(onChange: (options: WalletOption[]) => void): () => void {
  const registry = getWallets();
  const publish = () =>
    onChange(
      registry
        .get()
        .filter(canSign)
        .map((wallet) => {
          const id = `wallet-standard:${wallet.name}`;
          return {
            id,
            name: wallet.name,
            icon: wallet.icon,
            chain: "solana" as const,
            source: "wallet-standard" as const,
            connect: () => connectStandard(wallet, id),
          };
        }),
    );
  const offRegister = registry.on("register", publish);
  const offUnregister = registry.on("unregister", publish);
  publish();
  return () => {
    offRegister();
    offUnregister();
  };
}
