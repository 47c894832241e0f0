import type { TabRecord, TabStatus } from "../ports/index.js";
import { sessionKey } from "./keys.js";
import { fundingLanded, settleTransfer, signedReturn } from "./transfer.js";
import type { TabsConfig, TabsDeps } from "./types.js";

/** How long a refund's authorization may wait to be used (the keeper resolves it after). */
const REFUND_WINDOW_S = 120;

/**
 * When an expired or failed tab's session key is read, once: after its funding, if the wallet
 * signed it, can no longer land. Its own window ends soon after signBy (EVM: validBefore, 10 s
 * later; Solana: its blockhash, a minute or two); the margin covers this instance's clock running
 * ahead of the chain's, and an RPC node some blocks behind (h54), by half an hour.
 */
const FUNDING_LANDS_WITHIN_MS = 30 * 60_000;

/** What a refund keeps while it is under way (never the signature). */
interface Refund {
  authorization: Record<string, string>;
  amount: string;
}

/**
 * The tabs' own reconciler (docs/payments.md#tabs): an opening never signed in time expires; a
 * funding left unclear is resolved on chain; an open tab past its end closes; a closing tab, once
 * none of its payments is still in flight, returns what its session key holds to the wallet, exactly
 * once across crashes and instances (the refund's intent is one conditional write, and an unclear
 * refund is resolved on chain before any other is signed).
 */
export class TabKeeper {
  private timer: ReturnType<typeof setInterval> | undefined;
  private running: Promise<void> | undefined;

  constructor(
    private readonly config: TabsConfig,
    private readonly deps: TabsDeps,
    private readonly onError: (error: unknown, context: string) => void = () => {},
  ) {}

  start(intervalMs: number): void {
    this.timer ??= setInterval(() => void this.tick(), intervalMs);
    this.timer.unref?.();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }

  /** One pass over every tab not yet final (one at a time per process). */
  tick(): Promise<void> {
    this.running ??= this.sweep().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private async sweep(): Promise<void> {
    const { store } = this.deps;
    const live: TabStatus[] = ["awaiting_signature", "funding", "open", "closing"];
    const landed = new Date(this.deps.now().getTime() - FUNDING_LANDS_WITHIN_MS);
    const ended = await store.listUnchecked(landed);
    for (const tab of [...(await store.listByStatus(live)), ...ended]) {
      await this.step(tab).catch(async (error: unknown) => {
        this.onError(error, `keeping tab ${tab.tabId}`);
        // An ended tab that cannot be read now goes to the back: it never blocks the others (h55).
        if (tab.status === "expired" || tab.status === "failed")
          await store.deferCheck(tab.tabId, tab.status, this.deps.now()).catch(() => {});
      });
    }
  }

  private async step(tab: TabRecord): Promise<void> {
    const { store, chains } = this.deps;
    const now = this.deps.now();
    if (tab.status === "awaiting_signature" && (tab.signBy <= now || tab.endsAt <= now)) {
      await store.move(tab.tabId, "awaiting_signature", "expired", {}, now);
    } else if (tab.status === "funding") {
      // Unclear when it was sent: the chain says (EVM: its nonce used, or unused past validBefore).
      const landed = await fundingLanded(chains, tab, tab.funding, now);
      if (landed?.open)
        await store.move(
          tab.tabId,
          "funding",
          "open",
          landed.txHash ? { fundingTx: landed.txHash } : {},
          now,
        );
      else if (landed) await store.move(tab.tabId, "funding", "failed", { error: landed.error }, now);
    } else if (tab.status === "open" && tab.endsAt <= now) {
      await this.close(tab, now);
    } else if (tab.status === "closing") {
      await this.finish(tab);
    } else if (tab.status === "expired" || tab.status === "failed") {
      // Listed once its funding can no longer land. Landed all the same (the wallet sent what it
      // signed itself, or late): what the session key holds goes back, as from a closed tab. Less
      // than the funding is someone's stray dust, not the wallet's (and on Solana, with no SOL to
      // pay a return's fee, it could never go back: h55): left where its sender put it.
      if ((await chains.balance(tab.network, tab.asset, tab.session)) < tab.amount) {
        await store.markEmpty(tab.tabId, tab.status, now);
        return;
      }
      await this.close(tab, now);
    }
  }

  /** Move it to closing (when it is still where it was read) and return what its key holds. */
  private async close(tab: TabRecord, now: Date): Promise<void> {
    if (!(await this.deps.store.move(tab.tabId, tab.status, "closing", {}, now))) return; // another did
    const closing = await this.deps.store.get(tab.tabId);
    if (closing) await this.finish(closing);
  }

  /** Return what the session key holds, once every payment from the tab is final. */
  async finish(tab: TabRecord): Promise<void> {
    const { store, chains } = this.deps;
    if ((await store.usage(tab.tabId)).inFlight > 0) return;
    const now = this.deps.now();
    const earlier = tab.refund as Refund | null;
    if (earlier) {
      const found = await chains.resolve(
        { network: tab.network, asset: tab.asset, wallet: tab.session, authorization: earlier.authorization },
        now,
      );
      if (found.status === "pending") return;
      if (found.status === "settled") {
        const fields = {
          refunded: BigInt(earlier.amount),
          ...(found.txHash ? { refundTx: found.txHash } : {}),
        };
        await store.move(tab.tabId, "closing", "closed", fields, now);
        return;
      }
      // It never moved: clear it, and sign another below.
      if (!(await store.clearRefund(tab.tabId, earlier, now))) return;
    }
    const key = await sessionKey(this.config, tab.tabId, tab.network);
    if (!key || key.address !== tab.session)
      throw new Error(`no session key of tab ${tab.tabId} here (TAB_SECRET?)`);
    const back = await signedReturn(
      chains,
      tab,
      key,
      {
        url: `${this.config.publicUrl}/api/tabs/${tab.tabId}`,
        description: `Return what is left in tab ${tab.tabId}`,
      },
      REFUND_WINDOW_S,
      Math.floor(now.getTime() / 1000),
      `x402-chat-agent ${tab.tabId} return`,
    );
    if (!back) {
      // Nothing left: none was ever left, or another finisher (a close beside a sweep, another
      // instance) recorded its refund after `tab` was read and that refund has moved it. Then the
      // refund's finisher, or the next sweep on chain, records what it returned: not 0.
      if ((await store.get(tab.tabId))?.refund) return;
      await store.move(tab.tabId, "closing", "closed", { refunded: 0n }, now);
      return;
    }
    const refund: Refund = { authorization: back.authorization, amount: back.amount.toString() };
    // One refund at a time: another process that recorded one first keeps it; this one is dropped unsent.
    if (!(await store.setRefund(tab.tabId, refund, now))) return;
    const settled = await settleTransfer(chains, this.config.settler, back.payload, back.requirement);
    if (settled.kind === "settled") {
      await store.move(
        tab.tabId,
        "closing",
        "closed",
        { refunded: back.amount, refundTx: settled.transaction },
        this.deps.now(),
      );
    } else if (settled.kind === "refused") {
      await store.clearRefund(tab.tabId, refund, this.deps.now());
    }
  }
}
