import { useEffect, useMemo, useState } from "react";
import { type DevnetWallets, devnetOptions, fetchDevnetWallets } from "./devnet.js";
import { discoverEvmWallets } from "./evm.js";
import { discoverSolanaWallets } from "./solana.js";
import type { WalletOption } from "./types.js";

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
  const [devnet, setDevnet] = useState<DevnetWallets>();
  useEffect(() => discoverEvmWallets(setEvm), []);
  useEffect(() => discoverSolanaWallets(setSolana), []);
  useEffect(() => {
    let live = true;
    void fetchDevnetWallets().then((found) => {
      if (live) setDevnet(found);
    });
    return () => {
      live = false;
    };
  }, []);
  const localNetworks = useMemo(
    () => new Set([devnet?.evm?.network, devnet?.solana?.network].filter((n): n is string => !!n)),
    [devnet],
  );
  return { options: [...evm, ...solana, ...(devnet ? devnetOptions(devnet) : [])], devnet, localNetworks };
}
