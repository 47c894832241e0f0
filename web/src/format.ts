import { PAYMENT_STATUS, type StatusTone } from "../../src/protocol/status.js";
import type { PaymentStatus } from "../../src/protocol/stream.js";

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

export function explorerTxUrl(network: string | undefined, tx: string): string | undefined {
  if (!network) return undefined;
  const evm = EVM_EXPLORERS[network];
  if (evm) return `${evm}/tx/${tx}`;
  const cluster = SOLANA_CLUSTERS[network];
  if (cluster !== undefined) return `https://explorer.solana.com/tx/${tx}${cluster}`;
  return undefined;
}

const NETWORK_NAMES: Record<string, string> = {
  "eip155:1": "Ethereum",
  "eip155:11155111": "Ethereum Sepolia",
  "eip155:8453": "Base",
  "eip155:84532": "Base Sepolia",
  "eip155:137": "Polygon",
  "eip155:80002": "Polygon Amoy",
  "eip155:31337": "Local EVM network",
  "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp": "Solana",
  "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1": "Solana devnet",
  "solana:4uhcVJyU9pJkvQyS88uRDiswHXSCkY3z": "Solana testnet",
};

/**
 * A network's name for people. `local`: the service's embedded devnet runs it (its Solana node may
 * use a public cluster's genesis id, but its transactions exist on this machine only).
 */
export function networkName(network: string | undefined, local = false): string {
  if (!network) return "";
  if (local) return network.startsWith("solana:") ? "Local Solana devnet" : "Local EVM devnet";
  return NETWORK_NAMES[network] ?? network;
}

/** "$0.01", "$1,234.50": at least cents, every digit the amount has beyond them. */
export function usd(amount: string | undefined): string {
  if (amount === undefined) return "";
  const [whole = "0", fraction = ""] = amount.split(".");
  const cents = fraction.padEnd(2, "0").replace(/(\d{2}\d*?)0+$/, "$1");
  return `$${whole.replace(/\B(?=(\d{3})+(?!\d))/g, ",")}.${cents}`;
}

export function shortHash(value: string, keep = 6): string {
  return value.length <= keep * 2 + 1 ? value : `${value.slice(0, keep + 2)}…${value.slice(-keep)}`;
}

/** What each status means to a person reading the card. */
export const STATUS_LABELS: Record<PaymentStatus, string> = {
  quoted: "Cost estimate",
  awaiting_approval: "Waiting for your approval",
  reserved: "Reserved",
  signed: "Signed",
  submitted: "Settling",
  settled: "Paid",
  failed: "Failed",
  refused: "Refused",
  unknown: "Outcome unclear",
  released: "Not paid",
  rejected: "Rejected",
  expired: "Expired",
};

export type { StatusTone } from "../../src/protocol/status.js";

/** How a status is coloured: the shared status table's tone (src/protocol/status.ts). */
export function statusTone(status: PaymentStatus): StatusTone {
  return PAYMENT_STATUS[status].tone;
}
