import type { PaymentPayload } from "@x402/core/types";
import {
  ChainUnreadable,
  familyOf,
  type WalletAnswer,
  WalletAnswerMismatch,
  type WalletSigningRequest,
} from "../../chains/index.js";
import { AppError } from "../../errors/index.js";
import type { FundTabBody, OpenTabRequest, TabOpened, TabView } from "../../protocol/index.js";
import { stopFor, type TabAccess, type TabLookup, type TabRecord } from "../ports/index.js";
import { codeOf, type Requirement } from "../rules/index.js";
import { passFor } from "./access.js";
import type { TabKeeper } from "./keeper.js";
import { newToken, sessionKey, tabIdOf, tokenHash, tokenMatches } from "./keys.js";
import { tabTerms } from "./terms.js";
import { fundingLanded, settleTransfer, transferRequirement, unsignedFunding } from "./transfer.js";
import type { TabsConfig, TabsDeps } from "./types.js";
import { fundingWords, type TabOnPage, viewOf } from "./view.js";

/** What the wallet's opening keeps: the unsigned funding, what the wallet signs, and the terms. */
interface Opening {
  payload: PaymentPayload;
  sign: WalletSigningRequest;
  requirement: Requirement;
}

/**
 * Tabs (docs/payments.md#tabs): open one (what the wallet signs), fund it with the wallet's
 * signature, read it, close it. Paying from one is the pipeline's (tab-pay.ts, through `find`);
 * ending and returning the rest is the keeper's (keeper.ts).
 */
export class TabDesk implements TabAccess {
  constructor(
    private readonly config: TabsConfig,
    private readonly deps: TabsDeps,
    private readonly keeper: TabKeeper,
  ) {}

  /**
   * A new tab: what the wallet signs, and its token. `serves`: opened for its caller (MCP's
   * `open_tab`), funded on the approval page, and paid from by that caller's requests for its
   * wallet with no token; only an identified caller may have one.
   */
  async open(
    caller: string | undefined,
    input: OpenTabRequest,
    options: { serves?: boolean } = {},
  ): Promise<TabOpened> {
    const { config, deps } = this;
    if (options.serves && !caller)
      throw new AppError("tab_invalid", "Only a caller with a bearer token can open a tab that serves it.");
    this.refuseIfStopped(caller);
    const { network, asset, seconds } = tabTerms(config, input);
    const token = newToken();
    const hash = tokenHash(token);
    const tabId = tabIdOf(hash);
    const session = await this.session(tabId, network);
    const now = deps.now();
    const endsAt = new Date(now.getTime() + seconds * 1000);
    const words = fundingWords(config.publicUrl, input.amount, network, endsAt);
    const requirement = await transferRequirement(
      deps.chains,
      network,
      asset,
      session.address,
      input.amount,
      config.signWindowSeconds,
    );
    const draft = deps.signers.draftFor(input.wallet, network);
    const nowS = Math.floor(now.getTime() / 1000);
    const payload = await unsignedFunding(
      deps.chains,
      requirement,
      { address: input.wallet.address, schemes: draft.schemes },
      { url: `${config.publicUrl}/api/tabs/${tabId}`, description: words },
      nowS,
      `x402-chat-agent ${tabId}`,
    );
    const sign = draft.request(payload);
    const signBy = new Date(draft.expiresAt(payload, nowS) * 1000);
    const opening: Opening = { payload, sign, requirement };
    const tab = await deps.store.create({
      tabId,
      wallet: input.wallet.address,
      network,
      asset,
      session: session.address,
      caller: caller ?? null,
      tokenHash: hash,
      servesCaller: options.serves === true,
      amount: input.amount,
      opening,
      signBy,
      endsAt,
      createdAt: now,
    });
    const view = viewOf(tab, { committed: 0n, settled: 0n });
    return { ...view, token, sign, signBy: signBy.toISOString(), words };
  }

  /** The wallet signed: check it signs exactly the funding, record the intent, settle it. */
  async fund(caller: string | undefined, tabId: string, body: FundTabBody): Promise<TabView> {
    const tab = await this.owned(caller, tabId, body.token);
    const answer = "signature" in body ? { signature: body.signature } : { transaction: body.transaction };
    return this.settleFunding(tab, answer);
  }

  /**
   * The wallet's answer from the approval page, for a tab that serves its caller: no token (it was
   * never handed out); only the tab's wallet's signature over exactly its funding opens it.
   */
  async fundOnPage(tabId: string, answer: WalletAnswer): Promise<TabView> {
    const tab = await this.deps.store.get(tabId);
    if (!tab?.servesCaller) throw new AppError("tab_not_found", "No tab with this id waits for a wallet.");
    return this.settleFunding(tab, answer);
  }

  /** What the approval page shows of a tab that serves its caller: the funding to sign, in words. */
  async onPage(tabId: string): Promise<TabOnPage | undefined> {
    const tab = await this.deps.store.get(tabId);
    if (!tab?.servesCaller) return undefined;
    return {
      tab: viewOf(tab, await this.deps.store.usage(tabId)),
      sign: (tab.opening as Opening).sign,
      signBy: tab.signBy.toISOString(),
      words: fundingWords(this.config.publicUrl, tab.amount, tab.network, tab.endsAt),
      service: this.config.publicUrl,
    };
  }

  /** The operator's pause or its caller's ended key: no wallet is asked, no funding settled. */
  private refuseIfStopped(caller: string | null | undefined): void {
    const stop = stopFor(this.deps.pauses, caller ?? undefined);
    if (stop) throw new AppError(codeOf(stop.reason), stop.message, { details: stop.details });
  }

  private async settleFunding(tab: TabRecord, answer: WalletAnswer): Promise<TabView> {
    const { deps, config } = this;
    const { tabId } = tab;
    this.refuseIfStopped(tab.caller);
    const now = deps.now();
    if (tab.status !== "awaiting_signature") {
      throw new AppError("tab_closed", `The tab is ${tab.status}: it takes no signature now.`, {
        details: { status: tab.status },
      });
    }
    // A short tab can end before its window to sign does (h50): funded then, it could pay nothing.
    if (tab.signBy.getTime() <= now.getTime() || tab.endsAt.getTime() <= now.getTime()) {
      await deps.store.move(tabId, "awaiting_signature", "expired", {}, now);
      throw new AppError("tab_closed", "The time to sign this tab's funding has passed.", {
        details: { status: "expired" },
      });
    }
    const opening = tab.opening as Opening;
    const family = familyOf(tab.network);
    if (!family) throw new Error(`no chain family for ${tab.network}`);
    let payload: PaymentPayload;
    try {
      payload = await family.completeForWallet(
        opening.payload,
        opening.sign,
        answer,
        tab.wallet,
        deps.chains.connection(tab.network),
      );
    } catch (error) {
      if (error instanceof WalletAnswerMismatch) {
        throw new AppError("tab_invalid", "The answer does not sign this tab's funding with its wallet.");
      }
      if (error instanceof ChainUnreadable) {
        throw new AppError(
          "service_unavailable",
          `Could not read ${tab.network} to check the signature; nothing was sent.`,
        );
      }
      throw error;
    }
    const nowS = Math.floor(now.getTime() / 1000);
    const expected = {
      amount: tab.amount,
      payTo: tab.session,
      asset: tab.asset,
      maxTimeoutSeconds: config.signWindowSeconds + 60,
    };
    const authorization = family.authorization(payload, expected, nowS);
    this.refuseIfStopped(tab.caller); // again: a pause may have answered while the chain was read
    // The intent before anything is sent: one answer wins, a replay finds the tab funding already.
    if (!(await deps.store.move(tabId, "awaiting_signature", "funding", { funding: authorization }, now))) {
      throw new AppError("tab_closed", "The tab was answered already.", { details: { status: "funding" } });
    }
    const settled = await settleTransfer(deps.chains, config.settler, payload, opening.requirement);
    if (settled.kind === "settled") {
      await deps.store.move(tabId, "funding", "open", { fundingTx: settled.transaction }, deps.now());
    } else if (settled.kind === "refused") {
      // Refused: maybe because it is used already (the wallet sent what it signed itself, h50). Else
      // (or unreadable now) failed: the keeper reads the key once the funding can no longer land.
      const landed = await fundingLanded(deps.chains, tab, authorization, deps.now()).catch(() => undefined);
      if (landed?.open) {
        const tx = landed.txHash ? { fundingTx: landed.txHash } : {};
        await deps.store.move(tabId, "funding", "open", tx, deps.now());
      } else await deps.store.move(tabId, "funding", "failed", { error: settled.error }, deps.now());
    }
    return this.read(tabId);
  }

  async view(caller: string | undefined, tabId: string, token: string): Promise<TabView> {
    await this.owned(caller, tabId, token);
    return this.read(tabId);
  }

  /** Close now: nothing more is paid from it; the rest returns once its payments are final. */
  async close(caller: string | undefined, tabId: string, token: string): Promise<TabView> {
    return this.closeTab(await this.owned(caller, tabId, token));
  }

  /** Close a tab that serves `caller` (MCP's `close_tab`): its own caller only, no token. */
  async closeServing(caller: string, tabId: string): Promise<TabView> {
    const tab = await this.deps.store.get(tabId);
    if (!tab?.servesCaller || tab.caller !== caller)
      throw new AppError("tab_not_found", "No such tab of this caller.");
    return this.closeTab(tab);
  }

  private async closeTab(tab: TabRecord): Promise<TabView> {
    const { tabId } = tab;
    const now = this.deps.now();
    if (tab.status === "awaiting_signature")
      await this.deps.store.move(tabId, "awaiting_signature", "expired", {}, now);
    else if (tab.status === "funding") {
      throw new AppError(
        "tab_closed",
        "The tab's funding is still being settled; close it once it is open.",
        {
          details: { status: "funding" },
        },
      );
    } else if (tab.status === "open") await this.deps.store.move(tabId, "open", "closing", {}, now);
    const current = await this.deps.store.get(tabId);
    if (current?.status === "closing") await this.keeper.finish(current);
    return this.read(tabId);
  }

  /** A signed-in wallet's tabs (docs/protocol.md, "Tabs"), newest first: no token, no key. */
  async listForWallet(wallet: string, limit = 50): Promise<TabView[]> {
    const tabs = await this.deps.store.listByWallet(wallet, limit);
    return Promise.all(tabs.map(async (tab) => viewOf(tab, await this.deps.store.usage(tab.tabId))));
  }

  /**
   * TabAccess: the tab a request's token names, if this request may pay from it; without a token,
   * the open tab that serves the request's caller for its wallet, if there is one (else undefined).
   */
  async find(request: Parameters<TabAccess["find"]>[0]): Promise<TabLookup | undefined> {
    if (!request.tab) {
      if (!request.servedTabs || !request.caller || !request.wallet) return undefined;
      // The newest that can pay: one ended or spent gives way to an older one that holds money (h50).
      for (const serving of await this.deps.store.findServing(request.caller, request.wallet.address)) {
        const lookup = await passFor(this.config, this.deps, serving);
        if (lookup.ok && lookup.pass.left > 0n) return { ok: true, pass: { ...lookup.pass, served: true } };
      }
      return undefined;
    }
    const tab = await this.deps.store.get(tabIdOf(tokenHash(request.tab)));
    const mine =
      tab &&
      tokenMatches(request.tab, tab.tokenHash) &&
      (tab.caller === null || tab.caller === request.caller) &&
      tab.wallet === request.wallet?.address;
    if (!tab || !mine)
      return { ok: false, message: "The request's tab token names no tab of this caller and wallet." };
    return passFor(this.config, this.deps, tab);
  }

  private async read(tabId: string): Promise<TabView> {
    const tab = await this.deps.store.get(tabId);
    if (!tab) throw new AppError("tab_not_found", "No such tab.");
    return viewOf(tab, await this.deps.store.usage(tabId));
  }

  /** The tab, when the token is its own and the caller may use it; else 404 (nothing is revealed). */
  private async owned(caller: string | undefined, tabId: string, token: string): Promise<TabRecord> {
    const tab = tabIdOf(tokenHash(token)) === tabId ? await this.deps.store.get(tabId) : undefined;
    if (!tab || !tokenMatches(token, tab.tokenHash) || (tab.caller !== null && tab.caller !== caller)) {
      throw new AppError("tab_not_found", "No such tab for this token and caller.");
    }
    return tab;
  }

  private async session(tabId: string, network: string) {
    const key = await sessionKey(this.config, tabId, network);
    if (!key) throw new AppError("tab_unsupported", `No tab can be held on ${network}.`);
    return key;
  }
}
