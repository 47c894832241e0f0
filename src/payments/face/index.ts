import { AppError } from "../../errors/index.js";
import { formatUsd, lowerUsd } from "../../money/index.js";
import { cleanUntrusted, PAYMENT_ID } from "../../protocol/index.js";
import {
  type BudgetOutput,
  type DiscoverOutput,
  directoryDown,
  type PayInput,
  type PayOutput,
  type QuoteInput,
} from "../../tools/contract.js";
import type {
  ApprovalAnswer,
  CallerAnswer,
  PayerSession,
  PaymentListQuery,
  PaymentPage,
  PaymentReader,
  PaymentsFace,
  PaymentView,
  PayWhat,
  Quote,
  TakenApproval,
} from "../face.js";
import { type PaymentHistory, storedServiceName } from "../ports/index.js";
import { isServiceAllowed, type PaymentObserver } from "../rules/index.js";
import type { ApprovalDesk, PaymentRequest } from "../run/index.js";
import { buildTarget } from "../x402/index.js";
import { decodeCursor, HISTORY_EXPORT_MAX, HISTORY_PAGE_MAX, historyPage, mayRead } from "./history-page.js";
import { baseOf, listedNames } from "./names.js";
import { directoryUnavailable, fromOutside, paymentState, resumedOutput, toPayOutput } from "./outputs.js";
import {
  type ApprovalView,
  type PageAnswer,
  type PageApprovals,
  type PageOutcome,
  pageOutput,
} from "./page-approval.js";
import { payQuoted } from "./pay-quoted.js";
import { createQuoteIds, QUOTE_ID_MAX_CHARS, QUOTE_TTL_MS, type QuoteIds } from "./quote-id.js";
import { budgetFor, quoteFor, type ReadDeps } from "./reads.js";
import { keepPaid, SessionMemories } from "./session-memory.js";

export {
  CURSOR_MAX_CHARS,
  decodeCursor,
  encodeCursor,
  HISTORY_EXPORT_MAX,
  HISTORY_PAGE_MAX,
  historyPage,
} from "./history-page.js";
export { fromOutside, paymentState, resumedOutput, toPayOutput, untrustedData } from "./outputs.js";
export { type PageApprovalDeps, PageApprovals } from "./page-approval.js";
export {
  createQuoteIds,
  QUOTE_ID_MAX_CHARS,
  QUOTE_TTL_MS,
  type QuoteClaims,
  type QuoteIds,
} from "./quote-id.js";

/**
 * The payments face (src/payments/face.ts), implemented on the pipeline, the approval desk and the
 * ledger. Every decision about money is made here or below: the chat's tools, the MCP server and
 * the approval endpoints only build a `PayerSession` and call it.
 */
export interface FaceDeps extends ReadDeps {
  discovery: { search(query: string | undefined, signal?: AbortSignal): Promise<DiscoverOutput> };
  /** Answers from the payment's own caller (absent: `takeUpApproval` and `answerApproval` refuse). */
  approvals?: Pick<ApprovalDesk, "resume">;
  /** A caller's payments (`listPayments`; absent: refused). */
  history?: PaymentHistory;
  /** QUOTE_SECRET: quote ids hold on every instance that shares it. Absent: random per process. */
  quoteSecret?: string;
  /** Default: the pipeline's clock. */
  now?: () => Date;
  /**
   * The approval page's way in (page-approval.ts): what it shows, its answers (`answerOnPage`,
   * `via.kind === "page"`) and the service's answer kept for the caller (getPayment's `data`).
   * Absent: the page shows nothing, its answers are refused, nothing is kept.
   */
  page?: Pick<PageApprovals, "view" | "answer" | "kept" | "takenFromCaller">;
  /** The approval page of a payment that awaits the wallet (getPayment's `approvalUrl`). */
  approvalUrl?: (paymentId: string) => string;
}

const SILENT: PaymentObserver = { update() {}, summary() {}, error() {} };

export function createPaymentsFace(deps: FaceDeps): PaymentsFace {
  return new Face(deps);
}

const aborted = (): PayOutput => ({
  status: "refused",
  error: { code: "aborted", message: "The request ended." },
});
const keyOf = (target: QuoteInput) => JSON.stringify(buildTarget(target));

class Face implements PaymentsFace {
  private readonly now: () => Date;
  private readonly ids: QuoteIds;
  private readonly memories = new SessionMemories();
  /** Payments by quote id under way in this process. */
  private readonly inflight = new Map<string, Promise<PayOutput>>();

  constructor(private readonly deps: FaceDeps) {
    this.now = deps.now ?? deps.pipeline.now;
    this.ids = createQuoteIds(deps.quoteSecret);
  }

  async findServices(session: PayerSession, query?: string): Promise<DiscoverOutput> {
    const listed = await fromOutside(this.deps.discovery.search(query, session.signal));
    // Only what this request may pay (allowedServices): another would be refused when called.
    const limits = this.deps.pipeline.limitsFor(this.requestOf(session));
    const found = { ...listed, services: listed.services.filter((s) => isServiceAllowed(s.url, limits)) };
    const { names } = this.memories.of(session);
    for (const service of found.services) names.set(baseOf(service.url), service.name);
    // Nothing found because the directory could not be read is not "no such service": said as the
    // outage it is (`e:` service_unavailable), beside the output the model still reads.
    if (directoryDown(listed) && !session.signal.aborted)
      session.observer?.error(directoryUnavailable(listed.errors));
    return found;
  }

  async quote(session: PayerSession, target: QuoteInput): Promise<Quote> {
    const request = this.requestOf(session);
    const { output, payable } = await quoteFor(this.deps, request, target);
    if (!payable || !output.ok || !output.chosen || !request.wallet)
      return fromOutside(Promise.resolve(output));
    const terms = { payTo: payable.offer.payTo, network: payable.offer.network, asset: payable.offer.asset };
    this.memories.of(session).quoted.set(keyOf(target), { amountUsd: formatUsd(payable.amount), terms });
    const name = await this.nameOf(session, target.url);
    // No longer than the offer's own signing window, and a few minutes at most.
    const expiresAt = this.now().getTime() + Math.min(QUOTE_TTL_MS, payable.timeoutSeconds * 1000);
    const quoteId = this.ids.issue({
      // Who may pay it, as `payQuoted` reads them from the paying session.
      caller: request.caller ?? null,
      wallet: request.wallet.address,
      target: buildTarget(target),
      terms,
      amount: payable.amount.toString(),
      expiresAt,
      ...(name ? { name } : {}),
    });
    // Too large a request to carry in an id a client can send back: priced, but not payable by id.
    if (quoteId.length > QUOTE_ID_MAX_CHARS) return fromOutside(Promise.resolve(output));
    const quoteExpiresAt = new Date(expiresAt).toISOString();
    return fromOutside(Promise.resolve({ ...output, quoteId, quoteExpiresAt }));
  }

  pay(session: PayerSession, what: PayWhat): Promise<PayOutput> {
    if (!("quoteId" in what)) return this.payTarget(session, what);
    if (session.signal.aborted) return Promise.resolve(aborted());
    const { pipeline } = this.deps;
    const deps = { pipeline, ledger: pipeline.ledger, ids: this.ids, inflight: this.inflight, now: this.now };
    return fromOutside(payQuoted(deps, this.requestOf(session), what.quoteId));
  }

  async getPayment(caller: PaymentReader, id: string, scope?: string): Promise<PaymentView | undefined> {
    if (!PAYMENT_ID.test(id)) return undefined;
    const record = await this.deps.pipeline.ledger.get(id);
    if (!record || !mayRead(caller, record)) return undefined;
    const byWallet = typeof caller === "object";
    const view: PaymentView = paymentState(record, this.now()); // past its window: `expired`
    const serviceName =
      storedServiceName(record) ?? (await listedNames(this.deps.discovery)).get(baseOf(record.service));
    if (serviceName) view.serviceName = serviceName;
    if (view.status === "awaiting_approval" && this.deps.approvalUrl)
      view.approvalUrl = this.deps.approvalUrl(id);
    // The service's answer is kept for the caller that asked for it (an id alone proves nothing).
    const asker = !byWallet && (caller !== undefined || scope === record.scopeId);
    const data = asker ? await this.deps.page?.kept(id) : undefined;
    if (data) view.data = data;
    // A row holds what a service said (its payee, the name discovery gave it): the content rule
    // applies on the way out as for every answer from outside (MCP's approval message quotes it).
    return cleanUntrusted(view).value;
  }

  async listPayments(query: PaymentListQuery): Promise<PaymentPage> {
    if (!this.deps.history) throw new AppError("store_unavailable", "Payment history is not available here.");
    const { cursor, limit, forExport, ...filters } = query;
    const max = forExport ? HISTORY_EXPORT_MAX : HISTORY_PAGE_MAX;
    if (!Number.isInteger(limit) || limit < 1 || limit > max)
      throw new AppError("invalid_request", `limit: an integer from 1 to ${max}.`);
    const after = cursor === undefined ? undefined : decodeCursor(cursor);
    if (cursor !== undefined && !after)
      throw new AppError("invalid_request", "cursor: not a cursor this service gave.");
    const records = await this.deps.history.listHistory({
      ...filters,
      limit: limit + 1,
      ...(after ? { after } : {}),
    });
    const { page, nextCursor } = historyPage(records, limit, query);
    const listed = page.every((r) => storedServiceName(r))
      ? new Map<string, string>()
      : await listedNames(this.deps.discovery);
    const named = (record: (typeof page)[number]) =>
      storedServiceName(record) ?? listed.get(baseOf(record.service));
    const now = this.now();
    const items = page.map((r) => ({
      ...paymentState(r, now),
      ...(named(r) ? { serviceName: named(r) } : {}),
    }));
    return { items: cleanUntrusted(items).value, ...(nextCursor ? { nextCursor } : {}) };
  }

  budget(session: PayerSession): Promise<BudgetOutput> {
    return fromOutside(budgetFor(this.deps, this.requestOf(session)));
  }

  async answerApproval(input: ApprovalAnswer): Promise<PayOutput> {
    const { via } = input;
    // The approval page's own path (the page's checks and where the answer is kept).
    if (via.kind === "page") return pageOutput(await this.answerOnPage(input));
    const payer = {
      wallet: input.wallet,
      caller: via.caller,
      spendingLimits: via.spendingLimits,
      ...(via.grant ? { grant: via.grant } : {}),
      scopeId: "",
    };
    const taken = await this.takeUpApproval({ answer: input.answer, payer, signal: input.signal });
    return taken.deliver();
  }

  async takeUpApproval(input: CallerAnswer): Promise<TakenApproval> {
    if (!this.deps.approvals) throw new AppError("payment_unavailable", "Approvals are not taken here.");
    const { wallet, caller, spendingLimits, grant } = input.payer;
    const resumed = await this.deps.approvals.resume({
      answer: input.answer,
      wallet,
      ...(caller ? { caller } : {}),
      ...(spendingLimits ? { spendingLimits } : {}),
      ...(grant ? { grant } : {}),
      signal: input.signal,
    });
    // Reserved: the same answer from the approval page now replays this payment (page-approval.ts).
    await this.deps.page?.takenFromCaller(input.answer);
    return {
      paymentId: resumed.paymentId,
      service: resumed.service,
      ...(resumed.serviceName ? { serviceName: resumed.serviceName } : {}),
      deliver: (observer = SILENT) => resumedOutput(resumed, observer),
    };
  }

  async viewApproval(paymentId: string): Promise<ApprovalView | undefined> {
    return this.deps.page?.view(paymentId);
  }

  async answerOnPage(input: PageAnswer): Promise<PageOutcome> {
    if (!this.deps.page) throw new AppError("not_found", "This service has no approval page.");
    return this.deps.page.answer(input);
  }

  /**
   * The chat's way: by target, once per session (a refusal excepted: nothing moved), never above
   * the price quoted in it nor the call's maxUsd, and on the quoted terms when it was quoted.
   */
  private payTarget(session: PayerSession, input: PayInput): Promise<PayOutput> {
    const memory = this.memories.of(session);
    const key = keyOf(input);
    const known = memory.paid.get(key);
    if (known) return known;
    const quoted = memory.quoted.get(key);
    const shown = lowerUsd(quoted?.amountUsd, input.maxUsd);
    const serviceName = memory.names.get(baseOf(input.url));
    const paying = async () => {
      if (session.signal.aborted) return aborted();
      const outcome = await this.deps.pipeline.pay(
        this.requestOf(session),
        shown === undefined ? input : { ...input, maxUsd: shown },
        { ...(serviceName ? { serviceName } : {}), ...(quoted ? { terms: quoted.terms } : {}) },
      );
      return toPayOutput(outcome);
    };
    return keepPaid(memory, key, fromOutside(paying()));
  }

  /**
   * The service's name for a quote id: the one this session object saw listed, else discovery's
   * (its cache) by URL. Display only; a discovery that fails leaves the quote without a name.
   */
  private async nameOf(session: PayerSession, url: string): Promise<string | undefined> {
    const base = baseOf(url);
    const known = this.memories.of(session).names.get(base);
    if (known) return known;
    const found = await this.deps.discovery.search(undefined, session.signal).catch(() => undefined);
    const listed = found?.services.find((service) => baseOf(service.url) === base)?.name;
    return listed ? cleanUntrusted(listed).value : undefined;
  }

  /** A session as the pipeline takes it: the payer's facts as they are, the face's clock and an observer. */
  private requestOf(session: PayerSession): PaymentRequest {
    const { observer, ...payer } = session;
    return { ...payer, now: () => this.now().getTime(), observer: observer ?? SILENT };
  }
}
