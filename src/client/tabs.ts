import { parseServerJson } from "../protocol/stream.js";
import type { OpenTabBody, TabOpened, TabView } from "../protocol/tab-types.js";
import { usdcAtomic } from "./approval.js";
import type { ChatClientOptions } from "./client.js";
import { errorFromResponse } from "./errors.js";
import type { AwaitingUpdate } from "./payment-tool.js";
import { ApprovalSigningError, signApproval, type TransportSigner } from "./signer.js";
import { checkSolanaFunding } from "./tab-funding.js";

/**
 * Tabs from the client (docs/clients.md, "Tabs"): open one, have the wallet sign its funding once,
 * then send its token as the chat request's `tab` (the transport's `fields`); read and close it.
 * The wallet signs only what the opening asked and only if it is exactly the tab's amount to its
 * session key from this wallet (the same check as an approval's).
 */

export type { OpenTabBody, TabOpened, TabView } from "../protocol/tab-types.js";

/** A funded tab: its state and the token every request paying from it sends. */
export interface OpenedTab {
  tab: TabView;
  token: string;
}

export class TabClient {
  constructor(
    private readonly options: Pick<ChatClientOptions, "baseUrl" | "token" | "headers" | "fetch"> = {},
  ) {}

  /** Ask the service for a tab: what the wallet must sign, and the tab's token (kept by the caller). */
  open(body: OpenTabBody, signal?: AbortSignal): Promise<TabOpened> {
    return this.send("POST", "/api/tabs", body, signal) as Promise<TabOpened>;
  }

  /** The wallet's signature (or signed Solana transaction): the service settles the funding. */
  fund(
    opened: TabOpened,
    answer: { signature: `0x${string}` } | { transaction: string },
    signal?: AbortSignal,
  ) {
    const path = `/api/tabs/${encodeURIComponent(opened.tabId)}/fund`;
    return this.send("POST", path, { token: opened.token, ...answer }, signal) as Promise<TabView>;
  }

  /** Open, sign with the wallet, fund: one call, one signature. Rejects if the wallet refuses. */
  async openWith(body: OpenTabBody, signer: TransportSigner, signal?: AbortSignal): Promise<OpenedTab> {
    const opened = await this.open(body, signal);
    checkTabOpened(body, opened);
    await checkSolanaFunding(opened);
    const answer = await signApproval(signer, awaitingOf(opened), { tabFunding: true });
    if ("reject" in answer) throw new ApprovalSigningError("The wallet declined to open the tab.");
    const { paymentId: _id, ...signed } = answer;
    const tab = await this.fund(opened, signed, signal);
    return { tab, token: opened.token };
  }

  get(tabId: string, token: string, signal?: AbortSignal): Promise<TabView> {
    return this.send("GET", `/api/tabs/${encodeURIComponent(tabId)}`, undefined, signal, {
      "X-Tab-Token": token,
    }) as Promise<TabView>;
  }

  /** A signed-in wallet's tabs (the client's token is its `signIn` session), newest first. */
  async list(signal?: AbortSignal): Promise<TabView[]> {
    return ((await this.send("GET", "/api/tabs", undefined, signal)) as { items: TabView[] }).items;
  }

  /** Close it: nothing more is paid from it, and what is left returns to the wallet. */
  close(tabId: string, token: string, signal?: AbortSignal): Promise<TabView> {
    return this.send(
      "POST",
      `/api/tabs/${encodeURIComponent(tabId)}/close`,
      { token },
      signal,
    ) as Promise<TabView>;
  }

  private async send(
    method: string,
    path: string,
    body: unknown,
    signal: AbortSignal | undefined,
    extra: Record<string, string> = {},
  ): Promise<unknown> {
    const url = this.options.baseUrl === undefined ? path : new URL(path, this.options.baseUrl).href;
    const headers = new Headers(this.options.headers);
    headers.set("Accept", "application/json");
    if (body !== undefined) headers.set("Content-Type", "application/json");
    for (const [name, value] of Object.entries(extra)) headers.set(name, value);
    const token = typeof this.options.token === "function" ? this.options.token() : this.options.token;
    if (token) headers.set("Authorization", `Bearer ${token}`);
    const doFetch = this.options.fetch ?? globalThis.fetch;
    const response = await doFetch(url, {
      method,
      headers,
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      ...(signal ? { signal } : {}),
    });
    if (!response.ok) throw await errorFromResponse(response);
    return parseServerJson(await response.text());
  }
}

/**
 * The tab the service opened is the one asked for: no more than the amount asked (the most that may
 * leave the wallet), for the wallet (and network) asked. Throws ApprovalSigningError (a mismatch)
 * before anything is signed.
 */
export function checkTabOpened(body: OpenTabBody, opened: TabOpened): void {
  const most = usdcAtomic(String(body.amount)) ?? 0n;
  const problems = [
    ...(/^\d{1,40}$/.test(opened.amount.atomic) && BigInt(opened.amount.atomic) <= most
      ? []
      : [`funds ${opened.amount.atomic} atomic units, more than the $${String(body.amount)} asked`]),
    ...(opened.wallet.toLowerCase() === body.walletAddress.toLowerCase()
      ? []
      : [`is for the wallet ${opened.wallet}, not ${body.walletAddress}`]),
    ...(body.network === undefined || opened.network === body.network
      ? []
      : [`is on ${opened.network}, not ${body.network}`]),
  ];
  if (problems.length > 0)
    throw new ApprovalSigningError(`The tab the service opened ${problems.join("; ")}: not signing it.`, {
      mismatch: true,
    });
}

/** The opening as an approval the signers know: the tab's amount to its session key from the wallet. */
export function awaitingOf(opened: TabOpened): AwaitingUpdate {
  return {
    paymentId: opened.tabId,
    status: "awaiting_approval",
    service: { url: `/api/tabs/${opened.tabId}`, name: "a tab for your agent" },
    amount: { atomic: opened.amount.atomic, usd: opened.amount.usd },
    network: opened.network,
    payTo: opened.session,
    message: opened.words,
    approval: { wallet: opened.wallet, expiresAt: opened.signBy, sign: opened.sign },
  };
}
