/** A CAIP-2 network id as a request names one (`eip155:8453`, `solana:<genesis hash>`). */
export const CAIP2_NETWORK = /^[-a-z0-9]{3,8}:[-_a-zA-Z0-9]{1,64}$/;

/**
 * Names of networks for people, by CAIP-2 id: the one table the approval endpoints, the client SDK
 * (`networkName`) and the web page show.
 */
export const NETWORK_NAMES: Readonly<Record<string, string>> = {
  "eip155:1": "Ethereum",
  "eip155:11155111": "Ethereum Sepolia",
  "eip155:8453": "Base",
  "eip155:84532": "Base Sepolia",
  "eip155:137": "Polygon",
  "eip155:80002": "Polygon Amoy",
  "eip155:42161": "Arbitrum One",
  "eip155:10": "Optimism",
  "eip155:43114": "Avalanche",
  "eip155:31337": "Local EVM devnet",
  "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp": "Solana",
  "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1": "Solana devnet",
  "solana:4uhcVJyU9pJkvQyS88uRDiswHXSCkY3z": "Solana testnet",
};

/** A network's name for people, or its id when it has none here. */
export function networkLabel(network: string): string {
  return Object.hasOwn(NETWORK_NAMES, network) ? (NETWORK_NAMES[network] as string) : network;
}
