import { useEffect, useState } from "react";
import { devnetOptions } from "./devnet.js";
import { discoverEvmWallets } from "./evm.js";
import { discoverSolanaWallets } from "./solana.js";
import type { WalletOption } from "./types.js";
import { type DevnetWallets, useDevnet } from "./useDevnet.js";

export interface Wallets {
  options: WalletOption[];
  /** The embedded local network's test wallets, when the service runs one (never with real networks). */
  devnet: DevnetWallets | undefined;
  /** The embedded devnet's networks: named local, no explorer link, "solana:localnet" to wallets. */
  localNetworks: ReadonlySet<string>;
}

/** Every wallet the page can use, as they are found: EIP-6963 and injected, Wallet Standard, devnet. */
export function useWallets(): Wallets {
  const [evm, setEvm] = useState<WalletOption[]>([]);
  const [solana, setSolana] = useState<WalletOption[]>([]);
  useEffect(() => discoverEvmWallets(setEvm), []);
  useEffect(() => discoverSolanaWallets(setSolana), []);
  const { devnet, localNetworks } = useDevnet();
  return { options: [...evm, ...solana, ...(devnet ? devnetOptions(devnet) : [])], devnet, localNetworks };
}
