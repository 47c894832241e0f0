import type { SpendingLimitsInput, Wallet } from "../../protocol/index.js";

/**
 * Who pays and within what: the one caller context (docs/architecture.md#one-caller-context).
 * Built once where a request comes in (src/http's `payer` middleware for the chat and for MCP; the
 * stdio bridge's configuration), from the caller's credentials and configuration, never from a
 * model's tool arguments, and carried whole to the ledger under these names: no field here can be
 * raised by a tool call.
 */
export interface Payer {
  /** The bearer identity (absent without auth): payments, history and approvals are bound to it. */
  caller?: string;
  /** Decides whether a server-held key may sign; never logged, streamed or shown. */
  bearerToken?: string;
  /** The wallet that pays (absent: nothing can be paid). */
  wallet?: Wallet;
  /** The caller's own limits, applied up to the server's caps and the key's (docs/payments.md#spending-limits). */
  spendingLimits?: SpendingLimitsInput;
  /**
   * A tab's token (docs/payments.md#tabs): what the wallet would sign itself is paid from that tab,
   * when it is open, funded by this wallet and, if opened by a caller, this caller's. Never shown.
   */
  tab?: string;
  /**
   * An MCP session's: with no `tab`, the open tab this caller opened through MCP (`open_tab`) for
   * this wallet pays (docs/mcp.md, "Tabs"). Other routes (the chat) pay from a tab only by its token.
   */
  servedTabs?: boolean;
  /**
   * What the per-request limit counts within: a chat request's id, an MCP session's id. Stored on
   * each payment as its `scopeId` (the ledger's `request_id`).
   */
  scopeId: string;
  /**
   * What the caller's key allows (an operator's key, docs/deploy.md#operating-it): caps its
   * request can only tighten and the wallets it may pay from. Absent: the server's caps only.
   */
  grant?: KeyGrant;
  /**
   * Aborts once the request's idempotency claim is lost (docs/protocol.md, "After a crash"):
   * another attempt may then answer the request from the ledger, so this one reserves nothing new.
   */
  claim?: AbortSignal;
}

/** An operator's key as payments see it: its name and what it bounds. Amounts in atomic USD units. */
export interface KeyGrant {
  /** The key's name (also the payer's `caller`). */
  name: string;
  perTransaction?: bigint;
  perRequest?: bigint;
  /** The most this key may spend in any rolling 24 hours, over every wallet it pays from. */
  daily?: bigint;
  /** The only wallets it may pay from (absent: any the request names). */
  wallets?: readonly string[];
  /**
   * How many times the key had been rotated when the request authenticated: a request of a token
   * rotated away since signs nothing more (`keyEnded`). Absent: not a key's, or not to be checked.
   */
  generation?: number;
}
