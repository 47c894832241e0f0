import type { PaymentPayload } from "@x402/core/types";
import {
  ChainUnreadable,
  familyOf,
  WalletAnswerMismatch,
  type WalletSigningRequest,
} from "../../chains/index.js";
import { AppError } from "../../errors/index.js";
import { formatUsd } from "../../money/index.js";
import {
  type FundTabBody,
  networkLabel,
  type OpenTabRequest,
  type TabOpened,
  type TabView,
  utcClock,
} from "../../protocol/index.js";
import type { TabAccess, TabLookup, TabRecord } from "../ports/index.js";
import type { Requirement } from "../rules/index.js";
import type { TabKeeper } from "./keeper.js";
import { newToken, sessionKey, tabIdOf, tokenHash, tokenMatches } from "./keys.js";
import { settleTransfer, transferRequirement, unsignedFunding } from "./transfer.js";
import type { TabsConfig, TabsDeps } from "./types.js";
import { viewOf } from "./view.js";

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

  async open(caller: string | undefined, input: OpenTabRequest): Promise<TabOpened> {
    const { config, deps } = this;
    const network = input.network ?? this.networkFor(input.wallet.chain);
    const asset = network ? config.assets[network]?.[0] : undefined;
    if (
      !network ||
      !asset ||
      !familyOf(network)?.keyFromSeed ||
      familyOf(network)?.name !== input.wallet.chain
    ) {
      throw new AppError(
        "tab_unsupported",
        `No tab can be opened for this wallet on ${network ?? "any network"} here.`,
        {
          details: { networks: Object.keys(config.assets).filter((n) => familyOf(n)?.keyFromSeed) },
        },
      );
    }
    if (input.amount > config.maxAmount) {
      throw new AppError("tab_invalid", `A tab holds at most $${formatUsd(config.maxAmount)} here.`, {
        details: { maxUsd: formatUsd(config.maxAmount) },
      });
    }
    const seconds = Math.min(input.seconds ?? config.defaultSeconds, config.maxSeconds);
    const token = newToken();
    const hash = tokenHash(token);
    const tabId = tabIdOf(hash);
    const session = await this.session(tabId, network);
    const now = deps.now();
    const endsAt = new Date(now.getTime() + seconds * 1000);
    const words = `Open a tab of $${formatUsd(input.amount)} with ${config.publicUrl} on ${networkLabel(network)}: up to that much leaves your wallet now, the agent pays from it until ${utcClock(endsAt)}, and what is left returns to you.`;
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
    const { deps, config } = this;
    const tab = await this.owned(caller, tabId, body.token);
    const now = deps.now();
    if (tab.status !== "awaiting_signature") {
      throw new AppError("tab_closed", `The tab is ${tab.status}: it takes no signature now.`, {
        details: { status: tab.status },
      });
    }
    if (tab.signBy.getTime() <= now.getTime()) {
      await deps.store.move(tabId, "awaiting_signature", "expired", {}, now);
      throw new AppError("tab_closed", "The time to sign this tab's funding has passed.", {
        details: { status: "expired" },
      });
    }
    const opening = tab.opening as Opening;
    const family = familyOf(tab.network);
    if (!family) throw new Error(`no chain family for ${tab.network}`);
    const answer = "signature" in body ? { signature: body.signature } : { transaction: body.transaction };
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
      maxTimeoutSeconds: config.signWindowSeconds + 60,
    };
    const authorization = family.authorization(payload, expected, nowS);
    // The intent before anything is sent: one answer wins, a replay finds the tab funding already.
    if (!(await deps.store.move(tabId, "awaiting_signature", "funding", { funding: authorization }, now))) {
      throw new AppError("tab_closed", "The tab was answered already.", { details: { status: "funding" } });
    }
    const settled = await settleTransfer(deps.chains, config.settler, payload, opening.requirement);
    if (settled.kind === "settled") {
      await deps.store.move(tabId, "funding", "open", { fundingTx: settled.transaction }, deps.now());
    } else if (settled.kind === "refused") {
      await deps.store.move(tabId, "funding", "failed", { error: settled.error }, deps.now());
    }
    return this.read(tabId);
  }

  async view(caller: string | undefined, tabId: string, token: string): Promise<TabView> {
    await this.owned(caller, tabId, token);
    return this.read(tabId);
  }

  /** Close now: nothing more is paid from it; the rest returns once its payments are final. */
  async close(caller: string | undefined, tabId: string, token: string): Promise<TabView> {
    const tab = await this.owned(caller, tabId, token);
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

  /** TabAccess: the tab a request's token names, if this request may pay from it. */
  async find(request: Parameters<TabAccess["find"]>[0]): Promise<TabLookup> {
    if (!request.tab) return { ok: false, message: "This request names no tab." };
    const tab = await this.deps.store.get(tabIdOf(tokenHash(request.tab)));
    const mine =
      tab &&
      tokenMatches(request.tab, tab.tokenHash) &&
      (tab.caller === null || tab.caller === request.caller) &&
      tab.wallet === request.wallet?.address;
    if (!tab || !mine)
      return { ok: false, message: "The request's tab token names no tab of this caller and wallet." };
    const now = this.deps.now();
    if (tab.status !== "open" || tab.endsAt.getTime() <= now.getTime()) {
      return {
        ok: false,
        message: `The tab ${tab.tabId} is ${tab.status === "open" ? "ended" : tab.status}: nothing more is paid from it.`,
      };
    }
    const usage = await this.deps.store.usage(tab.tabId);
    const session = await this.session(tab.tabId, tab.network);
    if (session.address !== tab.session) {
      return {
        ok: false,
        message: `This instance's tab secret is not the one tab ${tab.tabId} was opened with.`,
      };
    }
    return {
      ok: true,
      pass: {
        tabId: tab.tabId,
        network: tab.network,
        asset: tab.asset,
        session: session.address,
        amount: tab.amount,
        left: tab.amount > usage.committed ? tab.amount - usage.committed : 0n,
        endsAt: tab.endsAt,
        signer: session.signer,
      },
    };
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

  private networkFor(chain: string): string | undefined {
    return Object.keys(this.config.assets).find(
      (n) => familyOf(n)?.name === chain && familyOf(n)?.keyFromSeed,
    );
  }

  private async session(tabId: string, network: string) {
    const key = await sessionKey(this.config, tabId, network);
    if (!key) throw new AppError("tab_unsupported", `No tab can be held on ${network}.`);
    return key;
  }
}
