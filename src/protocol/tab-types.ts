import type { Money, WalletRequest } from "./events.js";

/**
 * Tabs on the wire, as plain types (docs/protocol.md, "Tabs"): the client SDK exports them, so this
 * file imports no validator (tab.ts checks bodies against them).
 */

export type TabStatusName =
  | "awaiting_signature"
  | "funding"
  | "open"
  | "closing"
  | "closed"
  | "expired"
  | "failed";

/** A tab as the service shows it. Money as atomic units and USD text. */
export interface TabView {
  tabId: string;
  status: TabStatusName;
  wallet: string;
  network: string;
  /** The session key's address: it holds the tab's money and signs its payments. */
  session: string;
  amount: Money;
  /** Settled payments from it. */
  spent: Money;
  /** What it still holds beside its committed payments (settled, pending and unclear). */
  left: Money;
  /** When the tab ends (ISO-8601): nothing is paid from it after, and the rest returns. */
  endsAt: string;
  fundingTx?: string;
  refundTx?: string;
  /** What returned to the wallet when it closed. */
  refunded?: Money;
  error?: string;
}

/** `POST /api/tabs`'s answer: the tab, its token (shown once) and what the wallet signs. */
export interface TabOpened extends TabView {
  token: string;
  /** What the wallet signs to fund it: the approval's signing request (EIP-712 on EVM). */
  sign: WalletRequest;
  /** The signature must come before this (ISO-8601). */
  signBy: string;
  /** What the signature does, in words, for the wallet's prompt. */
  words: string;
}

/** What a client sends to open a tab. */
export interface OpenTabBody {
  walletAddress: string;
  /** Decimal USD: the most that can leave the wallet for this tab. */
  amount: string | number;
  /** How long it stays open (default and bound: the service's). */
  seconds?: number;
  /** The CAIP-2 network (default: the service's first network of the wallet's chain that takes tabs). */
  network?: string;
}

/** The wallet's answer to a tab's opening, with the tab's token. */
export type FundTabBody = { token: string } & ({ signature: `0x${string}` } | { transaction: string });
