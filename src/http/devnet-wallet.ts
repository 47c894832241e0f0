import type { Hono } from "hono";

/**
 * The embedded local network's `user` test wallets, whose keys the service does not use (they pay
 * by approving in the user's own wallet), handed to the web page so that it can be that wallet: a
 * newcomer with no wallet extension goes from `npm start` to a paid, approved answer in the browser
 * (docs/clients.md, "Web page"). The keys are published test keys (the EVM one is Hardhat's test
 * account #6) of chains that exist only on this machine; the composition root registers this route
 * only while the embedded devnet runs, never with real networks.
 */
export interface DevnetUserWallets {
  evm: { name: string; network: string; chainId: number; address: string; privateKey: `0x${string}` } | null;
  solana: { name: string; network: string; address: string; secretKey: Uint8Array } | null;
}

export const DEVNET_WALLETS_PATH = "/api/devnet/wallets";

export function mountDevnetWallets(app: Hono, wallets: DevnetUserWallets): void {
  const body = JSON.stringify({
    notice:
      "Published test keys of the embedded local devnet (simulated money, chains on this machine only). Never use them elsewhere.",
    evm: wallets.evm,
    solana: wallets.solana ? { ...wallets.solana, secretKey: [...wallets.solana.secretKey] } : null,
  });
  app.get(DEVNET_WALLETS_PATH, (c) =>
    c.body(body, 200, {
      "Content-Type": "application/json; charset=utf-8",
      "Cache-Control": "no-store",
      "X-Content-Type-Options": "nosniff",
    }),
  );
}
