import type { FinishPayload, PaymentUpdate, StreamEvent } from "../protocol/stream.js";
import type { TabOpened, TabView } from "../protocol/tab-types.js";
import type { ApprovalAnswer } from "./request.js";
import { checkSolanaFunding } from "./tab-funding.js";
import { awaitingOf, checkTabOpened, type TabClient } from "./tabs.js";
import type { AwaitingUpdate } from "./tool-parts.js";

/**
 * A tab the `PaymentChatTransport` opens for `useChat` (docs/clients.md, "Tabs"): before the first
 * turn that would pay, one approval part asks the wallet to fund it ("Pay $0.05 to a tab for your agent"); once the user
 * approves and the transport's signer signs, it is funded and every later turn sends its token, so
 * payments it can pay arrive as parts approved automatically ("Paid from your tab: ..."). Declined,
 * the turn goes on without one, and each payment asks as before.
 */
export interface TransportTabOption {
  /** Decimal USD: the most the wallet funds it with. */
  amount: string;
  /** How long it stays open (default and bound: the service's). */
  seconds?: number;
}

/** What the transport knows of its tab: none yet, one waiting for the wallet, or one funded. */
export type TransportTabState =
  /**
   * `declined`: the user said no; `error`: the service opened none, or its funding failed. Either
   * way no later turn asks again until `askAgain()`.
   */
  | { status: "none"; error?: string; declined?: boolean }
  | { status: "asking"; tab: TabOpened }
  /** Its funding was sent but its outcome is not known yet: read again before the next turn. */
  | { status: "checking"; tab: TabOpened }
  | { status: "open"; tab: TabView; token: string };

const NO_USAGE = { inputTokens: 0, outputTokens: 0, totalTokens: 0 };

/** A turn's end as the service says it, for the turn the transport ends itself (the tab's question). */
function finishOf(update: AwaitingUpdate): FinishPayload {
  return {
    finishReason: "approval-required",
    transactions: [],
    payments: [],
    usage: NO_USAGE,
    model: "",
    provider: "client",
    modelId: "",
    approvals: [{ paymentId: update.paymentId, expiresAt: update.approval.expiresAt }],
  };
}

export class TransportTab {
  state: TransportTabState = { status: "none" };

  constructor(private readonly tabs: TabClient) {}

  /** The token a turn of `walletAddress` sends: only while the tab is open, and only for its own wallet. */
  tokenFor(walletAddress: string | undefined): string | undefined {
    if (this.state.status !== "open" || walletAddress === undefined) return undefined;
    const own = this.state.tab.wallet;
    return own === walletAddress ||
      (own.startsWith("0x") && own.toLowerCase() === walletAddress.toLowerCase())
      ? this.state.token
      : undefined;
  }

  /**
   * Before a turn: a funding whose outcome was unclear is read again (open: its token is used;
   * still funding: not yet; anything else: no tab). A question left unanswered is dropped.
   */
  async refresh(openParts: readonly string[], signal?: AbortSignal): Promise<void> {
    const state = this.state;
    if (state.status === "asking" && !openParts.includes(state.tab.tabId)) this.state = { status: "none" };
    if (state.status !== "checking") return;
    const view = await this.tabs.get(state.tab.tabId, state.tab.token, signal).catch(() => undefined);
    if (view?.status === "open") this.state = { status: "open", tab: view, token: state.tab.token };
    else if (view && view.status !== "funding")
      this.state = { status: "none", error: `the tab is ${view.status}` };
  }

  /** The id of the tab whose opening waits for the wallet, if one does. */
  get asking(): string | undefined {
    return this.state.status === "asking" ? this.state.tab.tabId : undefined;
  }

  /**
   * Open one for `walletAddress`: the events of a turn that only asks the wallet (its approval
   * part). Undefined when the service opens none (no tabs there, none for this wallet): the turn
   * then goes on without one, and `state.error` says why.
   */
  async ask(
    want: TransportTabOption,
    walletAddress: string,
    signal?: AbortSignal,
  ): Promise<{ events: StreamEvent[]; update: AwaitingUpdate } | undefined> {
    let opened: TabOpened;
    try {
      const body = { walletAddress, amount: want.amount, ...(want.seconds ? { seconds: want.seconds } : {}) };
      opened = await this.tabs.open(body, signal);
      checkTabOpened(body, opened);
      await checkSolanaFunding(opened);
    } catch (error) {
      this.state = { status: "none", error: error instanceof Error ? error.message : String(error) };
      return undefined;
    }
    this.state = { status: "asking", tab: opened };
    const update = awaitingOf(opened);
    return {
      events: [
        { type: "payment", payment: update },
        { type: "finish", finish: finishOf(update) },
      ],
      update,
    };
  }

  /** The wallet's answer to the opening: funded (or declined), as the update that closes its part. */
  async answer(answer: ApprovalAnswer, signal?: AbortSignal): Promise<StreamEvent[]> {
    if (this.state.status !== "asking") return [];
    const opened = this.state.tab;
    const asked = awaitingOf(opened);
    const { approval: _approval, ...base } = asked;
    const ended = (status: PaymentUpdate["status"], extra: Partial<PaymentUpdate> = {}): StreamEvent[] => [
      { type: "payment", payment: { ...base, status, ...extra } },
    ];
    if ("reject" in answer) {
      this.state = { status: "none", declined: true };
      return ended("rejected", { message: "Declined: no tab was opened; each payment asks your wallet." });
    }
    const { paymentId: _id, ...signed } = answer;
    let view: TabView;
    try {
      view = await this.tabs.fund(
        opened,
        signed as { signature: `0x${string}` } | { transaction: string },
        signal,
      );
    } catch (error) {
      // The answer did not come back: the funding may still have gone through. Kept, and read again.
      this.state = { status: "checking", tab: opened };
      const why = error instanceof Error ? error.message : String(error);
      return ended("unknown", {
        message: `The tab's funding may have gone through (${why}); it is checked before the next question.`,
      });
    }
    if (view.status === "funding") {
      this.state = { status: "checking", tab: opened };
      return ended("unknown", {
        message: "The tab's funding is being settled; it is checked before the next question.",
      });
    }
    if (view.status !== "open") {
      this.state = { status: "none", error: view.error ?? `the tab is ${view.status}` };
      return ended("failed", { message: `The tab is ${view.status}${view.error ? `: ${view.error}` : ""}.` });
    }
    this.state = { status: "open", tab: view, token: opened.token };
    const meter = { id: view.tabId, amount: view.amount, left: view.left, endsAt: view.endsAt };
    return ended("settled", { ...(view.fundingTx ? { transaction: view.fundingTx } : {}), tab: meter });
  }

  /** Whether a turn may ask for a tab now: none open or asked for, and the user did not say no. */
  get mayAsk(): boolean {
    return this.state.status === "none" && this.state.declined !== true && this.state.error === undefined;
  }

  /** After a decline or a failure: the next turn asks again. */
  askAgain(): void {
    if (this.state.status === "none") this.state = { status: "none" };
  }

  /** The service no longer takes its token (it ended, or was closed elsewhere): ask again next turn. */
  forget(): void {
    if (this.state.status === "open") this.state = { status: "none" };
  }

  /** Close it: nothing more is paid from it, and what is left returns to the wallet. */
  async close(signal?: AbortSignal): Promise<TabView | undefined> {
    if (this.state.status !== "open") return undefined;
    const closed = await this.tabs.close(this.state.tab.tabId, this.state.token, signal);
    this.state = { status: "none" };
    return closed;
  }
}
