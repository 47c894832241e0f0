/** Block explorers of the public networks, by CAIP-2 id; local networks (the devnet) have none. */
const EVM_EXPLORERS: Record<string, string> = {
  "eip155:1": "https://etherscan.io",
  "eip155:11155111": "https://sepolia.etherscan.io",
  "eip155:8453": "https://basescan.org",
  "eip155:84532": "https://sepolia.basescan.org",
  "eip155:137": "https://polygonscan.com",
  "eip155:80002": "https://amoy.polygonscan.com",
  "eip155:10": "https://optimistic.etherscan.io",
  "eip155:42161": "https://arbiscan.io",
  "eip155:43114": "https://snowtrace.io",
  "eip155:43113": "https://testnet.snowtrace.io",
};
const SOLANA_CLUSTERS: Record<string, string> = {
  "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp": "",
  "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1": "?cluster=devnet",
  "solana:4uhcVJyU9pJkvQyS88uRDiswHXSCkY3z": "?cluster=testnet",
};

/** A transaction's page on its network's public explorer, or undefined when the network has none. */
export function explorerTxUrl(network: string | undefined, tx: string): string | undefined {
  if (!network) return undefined;
  // Own keys only: a network named "constructor" is no explorer's.
  const evm = Object.hasOwn(EVM_EXPLORERS, network) ? EVM_EXPLORERS[network] : undefined;
  if (evm) return `${evm}/tx/${encodeURIComponent(tx)}`;
  const cluster = Object.hasOwn(SOLANA_CLUSTERS, network) ? SOLANA_CLUSTERS[network] : undefined;
  if (cluster !== undefined) return `https://explorer.solana.com/tx/${encodeURIComponent(tx)}${cluster}`;
  return undefined;
}
