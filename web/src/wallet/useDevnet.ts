import { useEffect, useMemo, useState } from "react";

/**
 * The embedded devnet as the page learns of it (`GET /api/devnet/wallets`), and its networks. Kept
 * apart from the wallets' signing code, so the operator page can name local networks without it.
 */

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

/** The embedded devnet, when the service runs one, and its networks (the operator page names them too). */
export function useDevnet(): { devnet: DevnetWallets | undefined; localNetworks: ReadonlySet<string> } {
  const [devnet, setDevnet] = useState<DevnetWallets>();
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
  return { devnet, localNetworks };
}
