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

/** Where an API client reads a payment ("its final state is at GET /api/payments/pay_…"): the page has a view. */
const API_READ = /\bis at GET \/api\/payments\/[\w-]+/g;

/** A CAIP-2 network id as text carries it: an EVM chain id, or a Solana genesis hash (base58). */
const NETWORK_ID = /\b(?:eip155:\d{1,12}|solana:[1-9A-HJ-NP-Za-km-z]{32})\b/g;
/** An ISO-8601 instant in UTC, as the service writes times ("2026-11-28T09:57:33.000Z"). */
const ISO_TIME = /\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?Z\b/g;

/** A time of day in UTC as the service's sentences give it ("09:57:33 UTC", src/protocol/clock.ts). */
const UTC_CLOCK = /\b([01]\d|2[0-3]):([0-5]\d):([0-5]\d) UTC\b/g;
const DAY = 86_400_000;

/** The instant nearest `now` whose UTC time of day this is (an approval's end is minutes away). */
function nearestUtc(h: string, m: string, sec: string, now: Date): Date {
  const at = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate(), +h, +m, +sec);
  const off = at - now.getTime();
  return new Date(off > DAY / 2 ? at - DAY : off < -DAY / 2 ? at + DAY : at);
}

/** An instant as the approval page says it: the time of day today, else the date and time. */
export function localTime(iso: string, now = new Date()): string {
  const at = new Date(iso);
  if (Number.isNaN(at.getTime())) return iso;
  return at.toDateString() === now.toDateString() ? at.toLocaleTimeString() : at.toLocaleString();
}

/**
 * Text the page shows (the answer's words, a payment's message, a refusal) with networks named as
 * the cards name them and ISO times in local time: "on eip155:31337 ... before
 * 2026-11-28T09:57:33.000Z" reads "on Local EVM devnet ... before 09:57:33". The service names a
 * network by the public table (src/protocol/networks.ts); one the embedded devnet runs is local
 * here whatever its id, so its public name ("Solana devnet") reads as the card's too.
 */
export function readable(text: string, localNetworks: ReadonlySet<string>, now = new Date()): string {
  let out = text
    .replace(API_READ, "will show under Payments (top bar)")
    .replace(NETWORK_ID, (id) => networkName(id, localNetworks.has(id)))
    .replace(ISO_TIME, (iso) => localTime(iso, now))
    .replace(UTC_CLOCK, (_, h, m, sec) => localTime(nearestUtc(h, m, sec, now).toISOString(), now));
  for (const id of localNetworks) {
    const label = networkLabel(id);
    const local = networkName(id, true);
    if (label === id || label === local) continue;
    const escaped = label.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    out = out.replace(new RegExp(`(?<!Local )\\b${escaped}\\b`, "g"), local);
  }
  return out;
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

/** A service's host ("api.example.com", `xn--` for international names), or the URL as given when it is not one. */
export function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}
