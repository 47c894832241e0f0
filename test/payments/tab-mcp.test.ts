/**
 * A tab through MCP (docs/mcp.md, "Tabs"), on the real devnet: `open_tab` opens a tab that serves
 * its caller and answers the approval page's address; the `user` wallet (whose key the service does
 * not hold) funds it there with one signature; then the caller's `pay_quote` calls for that wallet
 * pay from it with no approval, another caller's do not, and `close_tab` returns the rest.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { PrivateKeyAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { evmUsdcBalance } from "../../src/devnet/testing/index.js";
import type { ApprovalView, TabOpened } from "../../src/protocol/index.js";
import { type Booted, boot, chat, priceOf, serviceUrl, useTestDevnet, WEATHER_PARIS } from "./harness.js";
import { ALICE, MALLORY, signOpening, TAB_ENV, userAccount } from "./tab-helpers.js";

const devnet = useTestDevnet();
let user: PrivateKeyAccount;
let b: Booted;

beforeAll(async () => {
  user = userAccount(devnet);
  b = await boot(devnet, { store: "pglite", env: TAB_ENV });
});
afterAll(() => b?.close());

type Result = { isError?: boolean; structuredContent: Record<string, unknown> };

async function session(token: string) {
  const transport = new StreamableHTTPClientTransport(new URL("http://service.test/mcp"), {
    requestInit: { headers: { Authorization: `Bearer ${token}`, "X-Wallet-Address": user.address } },
    fetch: async (url, init) => b.running.service.app.request(String(url), init),
  });
  const client = new Client({ name: "tab-mcp-test", version: "1" });
  await client.connect(transport);
  const call = async (name: string, args: Record<string, unknown>) =>
    (await client.callTool({ name, arguments: args })) as Result;
  const payWeather = async () => {
    const quote = await call("get_quote", { url: serviceUrl(devnet, "weather"), query: { city: "Paris" } });
    return call("pay_quote", { quoteId: quote.structuredContent.quoteId });
  };
  return { client, call, payWeather };
}

const page = (path: string, init?: RequestInit) => b.running.service.app.request(path, init);

/** What the user does on the approval page: read the tab's funding, sign exactly it, answer. */
async function fundOnPage(tabId: string): Promise<{ shown: ApprovalView; funded: unknown }> {
  const shown = (await (await page(`/api/approvals/${tabId}`)).json()) as ApprovalView;
  const sign = shown.approval?.sign;
  if (!sign) throw new Error("no approval to sign");
  const signature = await signOpening({ sign } as TabOpened, user);
  const funded = await page(`/api/approvals/${tabId}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ signature, walletAddress: user.address }),
  });
  return { shown, funded: await funded.json() };
}

describe("a tab opened through MCP, funded on the approval page", () => {
  it("serves its caller's pay_quote with no approval, no other caller's; close_tab returns the rest", async () => {
    const price = priceOf(devnet, "weather");
    const before = await evmUsdcBalance(devnet, user.address);
    const alice = await session(ALICE);
    const opened = await alice.call("open_tab", { amountUsd: "0.03" });
    expect(opened.isError).toBeFalsy();
    const { tabId, approvalUrl } = opened.structuredContent as { tabId: string; approvalUrl: string };
    expect(approvalUrl).toMatch(new RegExp(`/approve/${tabId}$`));
    expect(JSON.stringify(opened)).not.toMatch(/x4t_/); // the token is never handed out

    // The approval page shows the funding in words, and the wallet signs exactly it there.
    const { shown, funded } = await fundOnPage(tabId);
    expect(shown).toMatchObject({ paymentId: tabId, status: "awaiting_approval", wallet: user.address });
    expect(shown.tab?.words).toContain("Open a tab of $0.03");
    expect(funded).toMatchObject({ status: "open" });

    // Alice's pay_quote pays from it: no approval asked.
    const paid = await alice.payWeather();
    expect(paid.structuredContent).toMatchObject({ status: "paid" });
    // Alice's chat, with no tab token: the serving tab is MCP's only, so the wallet is asked.
    const chatted = await chat(b.running, {
      token: ALICE,
      body: { messages: [{ role: "user", content: WEATHER_PARIS }], walletAddress: user.address },
    });
    expect(chatted.payments.some((p) => p.status === "awaiting_approval")).toBe(true);
    expect(chatted.payments.some((p) => p.status === "settled")).toBe(false);
    // Mallory, with the same wallet header: not her tab, so the wallet is asked.
    const mallory = await session(MALLORY);
    const asked = await mallory.payWeather();
    expect(asked.structuredContent.status).toBe("awaiting_approval");
    // Mallory cannot close it either: to her it is no tab at all.
    const refused = await mallory.call("close_tab", { tabId });
    expect(refused.isError).toBe(true);
    expect(refused.structuredContent.error).toMatchObject({ code: "tab_not_found" });
    await mallory.client.close();

    // Alice spends the tab, then it runs out: the wallet is asked as before (docs/mcp.md), not
    // refused (found by a black-box run: the caller could pay nothing more until it closed the tab).
    const spent = Number(30_000n / price) - 1;
    for (let i = 0; i < spent; i++)
      expect((await alice.payWeather()).structuredContent).toMatchObject({ status: "paid" });
    const after = await alice.payWeather();
    expect(after.isError).toBeFalsy();
    expect(after.structuredContent).toMatchObject({ status: "awaiting_approval" });

    const closed = await alice.call("close_tab", { tabId });
    const paidFromTab = price * BigInt(spent + 1);
    expect(closed.structuredContent).toMatchObject({
      status: "closed",
      refunded: { atomic: (30_000n - paidFromTab).toString() },
    });
    await alice.client.close();
    // Ledger = chain: the wallet is down by exactly the tab's payments.
    expect(before - (await evmUsdcBalance(devnet, user.address))).toBe(paidFromTab);
  });

  // Found by a black-box run (h50): only the newest serving tab was used; once it ran out the
  // wallet was asked, though an older tab of the same caller and wallet still held money.
  it("pays from an older serving tab once the newest has run out, before asking the wallet", async () => {
    const price = priceOf(devnet, "weather");
    const alice = await session(ALICE);
    const fund = async (amountUsd: string) => {
      const opened = await alice.call("open_tab", { amountUsd });
      const { tabId } = opened.structuredContent as { tabId: string };
      expect((await fundOnPage(tabId)).funded).toMatchObject({ status: "open" });
      return tabId;
    };
    const older = await fund((Number(price) / 1e6).toFixed(6)); // holds one payment
    const newer = await fund((Number(price) / 1e6).toFixed(6));
    expect((await alice.payWeather()).structuredContent).toMatchObject({ status: "paid" }); // the newer
    expect((await alice.payWeather()).structuredContent).toMatchObject({ status: "paid" }); // the older
    expect((await alice.payWeather()).structuredContent).toMatchObject({ status: "awaiting_approval" });
    // Each paid exactly one payment: nothing comes back from either.
    for (const tabId of [newer, older])
      expect((await alice.call("close_tab", { tabId })).structuredContent).toMatchObject({
        status: "closed",
        refunded: { atomic: "0" },
      });
    await alice.client.close();
  });

  it("is for identified callers only, and a page answer that signs something else opens nothing", async () => {
    const anonymous = new StreamableHTTPClientTransport(new URL("http://service.test/mcp"), {
      requestInit: { headers: { "X-Wallet-Address": user.address } },
      fetch: async (url, init) => b.running.service.app.request(String(url), init),
    });
    const client = new Client({ name: "tab-mcp-anon", version: "1" });
    await client.connect(anonymous);
    const refused = (await client.callTool({ name: "open_tab", arguments: { amountUsd: "0.02" } })) as Result;
    expect(refused.isError).toBe(true);
    await client.close();

    const alice = await session(ALICE);
    const opened = await alice.call("open_tab", { amountUsd: "0.02" });
    const tabId = opened.structuredContent.tabId as string;
    const wrong = await user.signMessage({ message: "not the funding" });
    const answer = await page(`/api/approvals/${tabId}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ signature: wrong }),
    });
    expect(answer.status).toBe(400);
    expect(((await answer.json()) as { code: string }).code).toBe("tab_invalid");
    const shown = (await (await page(`/api/approvals/${tabId}`)).json()) as ApprovalView;
    expect(shown.status).toBe("awaiting_approval");
    await alice.client.close();
  });
});
