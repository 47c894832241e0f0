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

/** The open tab's id and token (this browser tab only): a reload can still pay from it and close it. */
export function loadTab(): { tabId: string; token: string } | undefined {
  try {
    const saved = JSON.parse(read(TAB) ?? "null") as { tabId?: unknown; token?: unknown } | null;
    return typeof saved?.tabId === "string" && typeof saved.token === "string"
      ? { tabId: saved.tabId, token: saved.token }
      : undefined;
  } catch {
    return undefined;
  }
}

export function saveTab(tab: { tabId: string; token: string } | undefined): void {
  write(TAB, tab ? JSON.stringify(tab) : undefined);
}
