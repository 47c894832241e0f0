/**
 * The tab store port (docs/payments.md#tabs): a tab is a budget the user's wallet funds with one
 * signature, paid from by a session key the service derives for that tab alone. src/store keeps
 * tabs on PostgreSQL (migration 13); the payments made from a tab are ordinary ledger rows that
 * name it (`tab_id`), reserved by `Ledger.reserve` with its `tab`.
 *
 * A tab moves: awaiting_signature -> funding -> open -> closing -> closed; awaiting_signature ->
 * expired (never signed in time); funding -> failed (the funding did not move money); expired or
 * failed -> closing (its funding landed all the same, sent by the wallet itself or late: read once
 * it can no longer land, the money goes back). Every move is conditional on the status it leaves,
 * so two instances never both take one step.
 */

export const TAB_STATUSES = [
  "awaiting_signature",
  "funding",
  "open",
  "closing",
  "closed",
  "expired",
  "failed",
] as const;

export type TabStatus = (typeof TAB_STATUSES)[number];

/** Which moves exist (the store refuses any other). */
export const TAB_MOVES: Readonly<Record<TabStatus, readonly TabStatus[]>> = {
  awaiting_signature: ["funding", "expired"],
  funding: ["open", "failed"],
  open: ["closing"],
  closing: ["closed"],
  closed: [],
  expired: ["closing"],
  failed: ["closing"],
};

export interface TabEntry {
  status: TabStatus;
  at: string;
  txHash?: string;
  error?: string;
}

/** A tab as the store keeps it. Amounts in atomic units of the tab's asset (USD, 6 decimals). */
export interface TabRecord {
  tabId: string;
  /** The user's wallet: it funds the tab, the limits count against it, the rest returns to it. */
  wallet: string;
  network: string;
  asset: string;
  /** The session key's address: it holds the tab's money and signs its payments. */
  session: string;
  /** Who opened it (bearer identity), or null: only that caller may use or close it. */
  caller: string | null;
  /** SHA-256 (hex) of the tab's token; the token itself is never stored. */
  tokenHash: string;
  /**
   * Opened for its caller through MCP and funded on the approval page: that caller's requests for
   * its wallet pay from it without a token (the token was never handed out).
   */
  servesCaller: boolean;
  amount: bigint;
  status: TabStatus;
  history: TabEntry[];
  /** What the wallet was asked to sign (plain JSON: the unsigned payload and the signing request). */
  opening: unknown;
  /** The funding's authorization (what resolves it on chain; never a signature). */
  funding: unknown;
  fundingTx: string | null;
  /** The refund's authorization and amount, once one was signed (never a signature). */
  refund: unknown;
  refundTx: string | null;
  refunded: bigint | null;
  error: string | null;
  /** When the wallet's signature must have come. */
  signBy: Date;
  /** When the tab ends: no payment is reserved whose window outlasts it; then it closes. */
  endsAt: Date;
  createdAt: Date;
  updatedAt: Date;
}

export type NewTab = Omit<
  TabRecord,
  "status" | "history" | "funding" | "fundingTx" | "refund" | "refundTx" | "refunded" | "error" | "updatedAt"
>;

/** What a move may also record. */
export interface TabMoveFields {
  funding?: unknown;
  fundingTx?: string;
  refundTx?: string;
  refunded?: bigint;
  error?: string;
}

export interface TabStore {
  create(tab: NewTab): Promise<TabRecord>;
  get(tabId: string): Promise<TabRecord | undefined>;
  /** Move from `from` to `to` (a TAB_MOVES edge) and record the step; false when it is no longer in `from`. */
  move(tabId: string, from: TabStatus, to: TabStatus, fields: TabMoveFields, now: Date): Promise<boolean>;
  /**
   * Keep a refund's authorization while the tab is `closing` and holds none: false when another
   * process recorded one first (its signature is then dropped unsent).
   */
  setRefund(tabId: string, refund: unknown, now: Date): Promise<boolean>;
  /**
   * Clear the refund recorded, a refund known not to have moved money, if it is still `refund`:
   * false when another finisher replaced it meanwhile (that one's record stands).
   */
  clearRefund(tabId: string, refund: unknown, now: Date): Promise<boolean>;
  listByStatus(statuses: readonly TabStatus[]): Promise<TabRecord[]>;
  /**
   * Expired and failed tabs whose session key was not yet read once their funding could no longer
   * land (signBy before `signedBefore`), least recently tried first, a few at a time: each is read
   * once (`markEmpty`, or closing); one that cannot be read goes to the back (`deferCheck`).
   */
  listUnchecked(signedBefore: Date): Promise<TabRecord[]>;
  /** An expired or failed tab's session key was read empty: never read again (refunded 0). */
  markEmpty(tabId: string, status: "expired" | "failed", now: Date): Promise<boolean>;
  /** An expired or failed tab's key could not be read: listed after the others next time. */
  deferCheck(tabId: string, status: "expired" | "failed", now: Date): Promise<boolean>;
  /** A wallet's tabs, newest first. */
  listByWallet(wallet: string, limit: number): Promise<TabRecord[]>;
  /** The open tabs that serve `caller` for `wallet` (servesCaller), newest first (at most 20). */
  findServing(caller: string, wallet: string): Promise<TabRecord[]>;
  /** The tab's payments as they count against it: committed (state.ts), and those not yet final. */
  usage(tabId: string): Promise<{ committed: bigint; settled: bigint; inFlight: number }>;
}

/** An open tab a request may pay from, as the payment pipeline needs it (src/payments/tabs). */
export interface TabPass {
  tabId: string;
  network: string;
  asset: string;
  /** The session key's address (whose balance pays). */
  session: string;
  amount: bigint;
  /** What it held beside its committed payments when it was read (the reservation decides). */
  left: bigint;
  endsAt: Date;
  /**
   * Found as the caller's serving tab (MCP's `open_tab`), not named by a token: a payment it
   * cannot cover (too little left, or a window past its end) asks the wallet as without a tab
   * (docs/mcp.md#tabs). A tab a chat names refuses such a payment instead (docs/protocol.md).
   */
  served?: boolean;
  /** Signs for the session key, on the tab's network only. */
  signer: import("./signers.js").SignerAccess;
}

export type TabLookup = { ok: true; pass: TabPass } | { ok: false; message: string };

export interface TabAccess {
  /**
   * The tab a request's token names, when this request may pay from it: the token's tab, funded by
   * the request's wallet, opened by the request's caller (or by no caller), open and not ended.
   * Without a token, in an MCP session (`servedTabs`): the open tab that serves the request's
   * caller for its wallet; undefined when there is none (the request pays as without tabs).
   */
  find(
    request: Pick<import("./payer.js").Payer, "tab" | "caller" | "wallet" | "servedTabs">,
  ): Promise<TabLookup | undefined>;
}
