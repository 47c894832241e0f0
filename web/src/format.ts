import { PAYMENT_STATUS, type StatusTone } from "../../src/protocol/status.js";
import type { PaymentStatus } from "../../src/protocol/stream.js";

export { explorerTxUrl } from "../../src/protocol/explorer.js";

import { networkLabel } from "../../src/protocol/networks.js";

/**
 * A network's name for people. `local`: the service's embedded devnet runs it (its Solana node may
 * use a public cluster's genesis id, but its transactions exist on this machine only).
 */
export function networkName(network: string | undefined, local = false): string {
  if (!network) return "";
  if (local) return network.startsWith("solana:") ? "Local Solana devnet" : "Local EVM devnet";
  return networkLabel(network);
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
