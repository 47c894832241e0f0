import type { PaymentState, SpendingLimitsInput, ValidatedApproval, Wallet } from "../protocol/index.js";
import type { BudgetOutput, DiscoverOutput, PayOutput, QuoteInput, QuoteOutput } from "../tools/contract.js";
import type { ApprovalView, PageAnswer, PageOutcome } from "./face/page-approval.js";
import type { HistoryFilters, HistoryOwner, KeyGrant, Payer } from "./ports/index.js";
import type { PaymentObserver } from "./rules/index.js";

export type { Payer } from "./ports/index.js";

/**
 * The payments face: everything a caller can do with money, in one small interface that knows
 * nothing of HTTP, of the AI SDK or of MCP. The chat agent's tools, the MCP server and the HTTP
 * approval endpoints are thin wrappers over it: limits, approval and the ledger are decided here
 * (and below), never in a wrapper. Amounts cross it as the tool contract's strings (USD decimals,
 * atomic-unit strings); inside, money stays bigint.
 */

/**
 * One call on the face: the `Payer` (who pays within what, built once at the edge) and what this
 * call adds (the caller's signal, the deadline, where its updates go).
 *
 * The face remembers, per session object, the prices quoted and the calls paid by target: paying
 * a call by target (`pay({url, ...})`) is capped by the price quoted to the same object, and the
 * same call twice on it pays once. The chat builds one object per turn; a wrapper that pays by
 * quote id needs no such memory (the id carries the price and pays once on its own).
 */
export interface PayerSession extends Payer {
  /** The caller left: start no new payment (one under way still finishes and is recorded). */
  signal: AbortSignal;
  /** Epoch ms by which the caller's request must end. */
  deadline: number;
  /** `p:` updates, the turn's summary and the error that ends it; wrappers without a stream omit it. */
  observer?: PaymentObserver;
}

/**
 * A price check that can be paid by its id. The id is bound to the caller, the request (URL,
 * method, query, body), the chosen offer's payee, amount, asset and network, and an expiry: paying
 * it pays exactly that or nothing, and paying it twice returns the first payment.
 */
export type Quote = QuoteOutput & {
  /**
   * Present when the quote can be paid (a chosen offer, no refusal) and its request fits an id
   * (QUOTE_ID_MAX_CHARS, 16 KiB: a URL, query and body of about 11 KiB).
   */
  quoteId?: string;
  /** Until when `quoteId` may be paid (ISO-8601). */
  quoteExpiresAt?: string;
};

/** How a payment is asked for: by a quote's id (MCP), or by its target with the price shown (chat). */
export type PayWhat = { quoteId: string } | (QuoteInput & { maxUsd?: string });

/** The wallet's answer to a payment that awaits approval, already checked for shape. */
export interface ApprovalAnswer {
  answer: ValidatedApproval;
  wallet: Wallet;
  /**
   * Where the answer comes from. `caller`: a request of the payment's own caller (the chat), bound
   * to it as today. `page`: this service's approval page, opened from an approval URL; no bearer
   * identity, so only the wallet's own signature settles it, and the service's answer is kept for
   * the payment's caller (`getPayment`), never returned to the page.
   */
  via:
    | { kind: "caller"; caller?: string; spendingLimits?: SpendingLimitsInput; grant?: KeyGrant }
    | { kind: "page" };
  /** A decline from the page: the wallet's signature of the payment's decline message. */
  declineSignature?: `0x${string}`;
  signal: AbortSignal;
}

/** An answer from the payment's own caller (the chat's `approval`), already checked for shape. */
export interface CallerAnswer {
  answer: ValidatedApproval;
  /**
   * Who answers: its wallet must be the payment's, its caller (absent without auth) the payment's
   * own, and its limits narrow the server's when the payment is taken up.
   */
  payer: Payer & { wallet: Wallet };
  signal: AbortSignal;
}

/**
 * An answer that passed every check. An approved payment goes on at once (a caller that leaves now
 * must not strand it); its updates wait until the caller hands over an observer.
 */
export interface TakenApproval {
  paymentId: string;
  /** The service paid (its URL), and its name when known. */
  service: string;
  serviceName?: string;
  /**
   * The payment's outcome, as a `pay_and_fetch` result; its `p:` updates go to `observer` from now
   * on, those sent before it first (none: nowhere).
   */
  deliver(observer?: PaymentObserver): Promise<PayOutput>;
}

/** A payment as its caller reads it back, with the service's answer when one was kept for it. */
export type PaymentView = PaymentState & {
  /**
   * The service's name as discovery listed it (display only): the one its approval recorded, else
   * discovery's current name for its URL.
   */
  serviceName?: string;
  /** The service's answer after a payment approved on the page (untrusted data, bounded). */
  data?: PayOutput["data"];
  /** With `awaiting_approval`: the page where the wallet approves it, and until when. */
  approvalUrl?: string;
  expiresAt?: string;
};

/**
 * Which payments to list: the caller's, or a signed-in wallet's (`HistoryOwner`), the history's
 * filters, a bounded page and a cursor.
 */
export type PaymentListQuery = HistoryOwner &
  Omit<HistoryFilters, "after"> & {
    /** A `nextCursor` from the previous page (the same filters); anything else is refused. */
    cursor?: string;
    /** A page for an export (GET /api/payments as CSV): `limit` up to 1000 instead of 100. */
    forExport?: boolean;
  };

/** A wallet that signed in (docs/protocol.md, "Signing in with a wallet"): it reads what it paid. */
export interface WalletReader {
  wallet: string;
}

/** Who reads a payment: a bearer identity (undefined: anonymous), or a signed-in wallet. */
export type PaymentReader = string | undefined | WalletReader;

/** A page of the caller's payments, newest first, and the cursor to the next when there is one. */
export interface PaymentPage {
  /** Each with the service's name when its approval recorded one (display only). */
  items: Array<PaymentState & { serviceName?: string }>;
  nextCursor?: string;
}

export interface PaymentsFace {
  /** Paid x402 services that match (discovery: bazaar and catalog), cleaned of hidden characters. */
  findServices(session: PayerSession, query?: string): Promise<DiscoverOutput>;
  /** The price, whether the limits allow it, what would remain, and an id to pay exactly that. */
  quote(session: PayerSession, target: QuoteInput): Promise<Quote>;
  /** Pay (within the limits, checked in code before any signature) and fetch the service's answer. */
  pay(session: PayerSession, what: PayWhat): Promise<PayOutput>;
  /**
   * One of the caller's own payments; undefined for another's or an unknown id (same answer). A
   * signed-in wallet (`{ wallet }`) reads the payments made from it, without the service's answer
   * (`data`, kept for the caller that asked). A reader with no identity gets `data` only with the
   * payment's own `scopeId` (its MCP session's): anyone with the approval URL has the id.
   */
  getPayment(caller: PaymentReader, paymentId: string, scopeId?: string): Promise<PaymentView | undefined>;
  /**
   * The caller's payments, newest first, a page at a time (`limit` 1 to 100, else
   * `invalid_request`; a cursor this service did not give is `invalid_request` too).
   */
  listPayments(query: PaymentListQuery): Promise<PaymentPage>;
  /** The limits in force for this session, what is committed and what remains, and balances. */
  budget(session: PayerSession): Promise<BudgetOutput>;
  /**
   * Answer a payment that awaits the wallet. Every check runs before anything moves and throws
   * AppError with the documented code; then the payment is delivered (sent, settled, recorded).
   */
  answerApproval(input: ApprovalAnswer): Promise<PayOutput>;
  /**
   * Take up an answer from the payment's own caller in two steps: every check runs now and throws
   * AppError with the documented code before anything moves; the delivery is read when the caller
   * is ready to stream it (the chat: as its turn's first step). `answerApproval` is both at once.
   */
  takeUpApproval(input: CallerAnswer): Promise<TakenApproval>;
  /** What the approval page shows; undefined for an unknown id or a payment that never waited for a wallet. */
  viewApproval(paymentId: string): Promise<ApprovalView | undefined>;
  /**
   * The wallet's answer from the approval page, bound to no caller: every check but the caller's,
   * then delivery. The page reads back the payment's state, never the service's answer (which is
   * kept for the payment's caller: `getPayment`). The same answer again replays that state.
   */
  answerOnPage(input: PageAnswer): Promise<PageOutcome>;
}
