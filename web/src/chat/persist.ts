import type { PaymentUIMessage } from "./types.js";

/**
 * The conversation and the chosen wallet kept in this tab's sessionStorage, so a reload (say, while
 * a payment waits for approval) finds the chat as it was and its card can still be approved before
 * it expires. Closing the tab forgets both; storage being off only loses that comfort.
 */
const CONVERSATION = "x402-chat-agent.conversation";
const WALLET = "x402-chat-agent.wallet";
const ASKED = "x402-chat-agent.asked";

function read(key: string): string | null {
  try {
    return sessionStorage.getItem(key);
  } catch {
    return null;
  }
}

function write(key: string, value: string | undefined): void {
  try {
    if (value === undefined) sessionStorage.removeItem(key);
    else sessionStorage.setItem(key, value);
  } catch {
    // storage off or full: the page still works, a reload starts afresh
  }
}

export function loadConversation(): PaymentUIMessage[] {
  try {
    const saved: unknown = JSON.parse(read(CONVERSATION) ?? "[]");
    return Array.isArray(saved) ? (saved as PaymentUIMessage[]) : [];
  } catch {
    return [];
  }
}

export function saveConversation(messages: PaymentUIMessage[]): void {
  write(CONVERSATION, messages.length > 0 ? JSON.stringify(messages) : undefined);
}

/** The wallet option last connected in this tab (`devnet:evm`, an EIP-6963 id...). */
export function loadWalletChoice(): string | undefined {
  return read(WALLET) ?? undefined;
}

export function saveWalletChoice(optionId: string | undefined): void {
  write(WALLET, optionId);
}

/**
 * Where each assistant message stood when its turn stopped to ask for an approval (its parts'
 * count then), by message id: the words up to there asked for the approval, and once it is
 * answered or lapsed the page no longer shows them as if it still waited.
 */
export type AskedMarks = Record<string, number[]>;

export function loadAsked(): AskedMarks {
  try {
    const saved: unknown = JSON.parse(read(ASKED) ?? "{}");
    return saved && typeof saved === "object" && !Array.isArray(saved) ? (saved as AskedMarks) : {};
  } catch {
    return {};
  }
}

export function saveAsked(marks: AskedMarks): void {
  write(ASKED, Object.keys(marks).length > 0 ? JSON.stringify(marks) : undefined);
}

const TAB = "x402-chat-agent.tab";

type SavedTab = { tabId: string; token: string };
const isSaved = (t: unknown): t is SavedTab =>
  typeof (t as SavedTab | null)?.tabId === "string" && typeof (t as SavedTab).token === "string";

/**
 * The open tabs' ids and tokens, one per wallet (this browser tab only): a reload can still pay
 * from each and close it. An earlier page kept one tab as an object: read as a list of one.
 */
export function loadTabs(): SavedTab[] {
  try {
    const saved: unknown = JSON.parse(read(TAB) ?? "[]");
    const list = Array.isArray(saved) ? saved : [saved];
    return list.filter(isSaved).map((t) => ({ tabId: t.tabId, token: t.token }));
  } catch {
    return [];
  }
}

export function saveTabs(tabs: readonly SavedTab[]): void {
  write(TAB, tabs.length > 0 ? JSON.stringify(tabs) : undefined);
}
