import type {
  ApprovalView,
  PageOutcome,
  PayerSession,
  PaymentListQuery,
  PaymentPage,
  PaymentsFace,
  PaymentView,
  PayWhat,
  Quote,
  TakenApproval,
} from "../../payments/index.js";
import type { PayOutput } from "../../tools/contract.js";

/**
 * A PaymentsFace that records what it was asked and answers from a script (test support): for the
 * MCP mapping tests, which prove what the server hands the face and what it makes of the answers.
 * It decides nothing about money; the real face's tests do.
 */
export class FakeFace implements PaymentsFace {
  readonly sessions: PayerSession[] = [];
  readonly paid: PayWhat[] = [];
  payments = new Map<string, PaymentView>();
  payAnswer: (what: PayWhat) => PayOutput = () => ({
    status: "paid",
    paymentId: PAYMENT_ID,
    amountUsd: "0.01",
  });
  /** Called on every getPayment (a test flips a payment's status here). */
  onGetPayment: (paymentId: string) => void = () => {};
  failWith: unknown;

  private seen(session: PayerSession): void {
    this.sessions.push(session);
    if (this.failWith !== undefined) throw this.failWith;
  }
  async findServices(session: PayerSession, query?: string) {
    this.seen(session);
    return {
      services: [
        {
          name: `Weather${query ? ` (${query})` : ""}`,
          description: "Forecasts",
          url: SERVICE_URL,
          method: "GET" as const,
          price: { usd: "0.01", atomic: "10000" },
          networks: ["eip155:84532"],
          params: [],
        },
      ],
      errors: [],
    };
  }
  async quote(session: PayerSession): Promise<Quote> {
    this.seen(session);
    const offer = {
      scheme: "exact",
      network: "eip155:84532",
      asset: "USDC",
      amountAtomic: "10000",
      amountUsd: "0.01",
      payTo: PAYEE,
    };
    const limit = { limitUsd: "1", remainingUsd: "1" };
    return {
      ok: true,
      url: SERVICE_URL,
      paymentRequired: true,
      offers: [offer],
      chosen: offer,
      limits: { perTransaction: limit, perRequest: limit, daily: limit },
      quoteId: "qt_1",
      quoteExpiresAt: "2026-03-01T12:05:00.000Z",
    };
  }
  async pay(session: PayerSession, what: PayWhat): Promise<PayOutput> {
    this.seen(session);
    this.paid.push(what);
    return this.payAnswer(what);
  }
  async getPayment(_caller: string | undefined, paymentId: string) {
    this.onGetPayment(paymentId);
    return this.payments.get(paymentId);
  }
  readonly listed: PaymentListQuery[] = [];
  /** The next page's cursor listPayments answers with (a test sets it). */
  nextCursor: string | undefined;
  async listPayments(query: PaymentListQuery): Promise<PaymentPage> {
    this.listed.push(query);
    const items = [...this.payments.values()];
    return { items, ...(this.nextCursor ? { nextCursor: this.nextCursor } : {}) };
  }
  async budget(session: PayerSession) {
    this.seen(session);
    return {
      wallet: session.wallet?.address ?? null,
      limits: {
        perTransactionUsd: "1",
        perRequestUsd: "2",
        dailyUsd: "5",
        allowedNetworks: ["eip155:84532"],
        allowedServices: "any" as const,
      },
      spentTodayUsd: "0",
      spentThisRequestUsd: "0",
      remainingTodayUsd: "5",
      balances: [],
      canSign: true,
    };
  }
  async answerApproval(): Promise<PayOutput> {
    throw new Error("not used by the MCP server");
  }
  async takeUpApproval(): Promise<TakenApproval> {
    throw new Error("not used by the MCP server");
  }
  async viewApproval(): Promise<ApprovalView | undefined> {
    throw new Error("not used by the MCP server");
  }
  async answerOnPage(): Promise<PageOutcome> {
    throw new Error("not used by the MCP server");
  }
}

export const PAYMENT_ID = "pay_00000000-0000-4000-8000-000000000001";
export const SERVICE_URL = "https://weather.example/forecast";
export const PAYEE = "0x1111111111111111111111111111111111111111";

/** A payment as the ledger shows it (the asset is the token contract, Base Sepolia USDC), awaiting the wallet until `expiresAt`. */
export function awaitingView(expiresAt: string): PaymentView {
  return {
    paymentId: PAYMENT_ID,
    status: "awaiting_approval",
    amount: { atomic: "2500000", usd: "2.5", asset: "0x036CbD53842c5426634e7929541eC2318f3dCF7e" },
    network: "eip155:84532",
    payTo: PAYEE,
    service: SERVICE_URL,
    createdAt: "2026-03-01T12:00:00.000Z",
    updatedAt: "2026-03-01T12:00:00.000Z",
    expiresAt,
  };
}
