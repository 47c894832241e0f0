/**
 * Tabs attacked (docs/payments.md#tabs), on the real devnet: a payment whose window would outlast
 * the tab, a funding whose settlement went unanswered (resolved from the chain), an unclear payment
 * when the tab closes (the rest waits for it, then returns), the session key used outside the
 * service (it moves at most what the tab still holds; the wallet loses nothing more), and two
 * instances closing one tab at once (PostgreSQL).
 */

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { PrivateKeyAccount } from "viem/accounts";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createChains } from "../../src/chains/index.js";
import { evmUsdcBalance, walletAddress } from "../../src/devnet/testing/index.js";
import {
  facilitatorSettler,
  sessionKey,
  signTransfer,
  transferRequirement,
} from "../../src/payments/tabs/index.js";
import { type Booted, boot, dropSchema, priceOf, serviceUrl, useTestDevnet } from "./harness.js";
import {
  ALICE,
  ask,
  call,
  closeTab,
  openTab,
  readTab,
  TAB_ENV,
  TAB_SECRET,
  userAccount,
} from "./tab-helpers.js";

const devnet = useTestDevnet();
let user: PrivateKeyAccount;
let b: Booted;

beforeAll(async () => {
  user = userAccount(devnet);
  // A short service timeout: an unanswered settlement is unclear in a second, not ten.
  b = await boot(devnet, { store: "pglite", env: { ...TAB_ENV, SERVICE_TIMEOUT_MS: "1500" } });
});
afterAll(() => b?.close());
afterEach(() => b?.clock.reset());

const sweep = () => b.running.payments?.reconciler.sweep();

describe("tabs attacked", () => {
  it("a program's address or the zero address as the wallet is a 400, not a funding that cannot be built", async () => {
    const token = devnet.manifest.devToken;
    for (const walletAddress of [
      "11111111111111111111111111111111",
      "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA",
      "ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL",
      "MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr",
      "0x0000000000000000000000000000000000000000",
    ]) {
      const res = await call(b, "POST", "/api/tabs", token, { walletAddress, amount: "1" });
      expect(res.status, walletAddress).toBe(400);
      expect((await res.json()) as { code: string }).toMatchObject({ code: "invalid_wallet" });
    }
  });

  it("a payment whose signed window would outlast the tab is refused, naming the tab", async () => {
    const price = priceOf(devnet, "weather");
    const tab = await openTab(b, user, price * 2n, { seconds: 60 });
    // Five seconds before its end: any payment window (seconds to minutes) would cross it.
    b.clock.jumpTo(new Date(tab.endsAt).getTime() - 5_000);
    const turn = await ask(b, tab.token, user.address);
    expect(turn.errors[0]).toMatchObject({ code: "limit_exceeded" });
    expect(turn.errors[0]?.message).toContain(`tab ${tab.tabId}`);
    expect(turn.payments.some((p) => p.status === "settled")).toBe(false);
    // Past its end the keeper closes it and returns all of it.
    b.clock.jumpTo(new Date(tab.endsAt).getTime() + 1_000);
    await sweep();
    expect(await readTab(b, tab)).toMatchObject({
      status: "closed",
      refunded: { atomic: (price * 2n).toString() },
    });
  });

  it("a funding settled on chain but never answered is resolved from the chain: the tab opens", async () => {
    const price = priceOf(devnet, "weather");
    await devnet.faults.set({ settleHangAfterChain: true });
    const tab = await openTab(b, user, price);
    expect(tab.fund.status).toBe("funding");
    await devnet.faults.reset();
    await sweep();
    expect(await readTab(b, tab)).toMatchObject({ status: "open" });
    expect(await evmUsdcBalance(devnet, tab.session as `0x${string}`)).toBe(price);
    expect((await closeTab(b, tab)).refunded?.atomic).toBe(price.toString());
  });

  it("an unclear payment when the tab closes: the rest returns once it is resolved, exactly", async () => {
    const price = priceOf(devnet, "weather");
    const tab = await openTab(b, user, price * 3n);
    // The facilitator holds the payment before the chain: the service gives up on it, unclear.
    await devnet.faults.set({ settleLate: true });
    const turn = await ask(b, tab.token, user.address);
    expect(turn.payments.at(-1)?.status).toBe("unknown");
    // Closing now would race the unclear payment for the session key's money: it waits.
    const closing = await closeTab(b, tab);
    expect(closing.status).toBe("closing");
    expect(await evmUsdcBalance(devnet, tab.session as `0x${string}`)).toBe(price * 3n);
    // Released, it lands late; the reconciler finds it, then the keeper returns the rest.
    await devnet.faults.reset();
    const status = async () => {
      await sweep();
      return (await readTab(b, tab)).status;
    };
    await expect.poll(status, { timeout: 20_000, interval: 200 }).toBe("closed");
    const closed = await readTab(b, tab);
    expect(closed).toMatchObject({ status: "closed", refunded: { atomic: (price * 2n).toString() } });
    expect(closed.spent.atomic).toBe(price.toString());
  });

  it("the session key used outside the service moves at most what the tab still holds", async () => {
    const price = priceOf(devnet, "weather");
    const before = await evmUsdcBalance(devnet, user.address);
    const tab = await openTab(b, user, price * 2n);
    await ask(b, tab.token, user.address);
    // A thief with the tab secret: the session key, and the facilitator, outside the service.
    const { evm, facilitatorUrl } = devnet.manifest;
    const chains = createChains({ [evm.network]: evm.rpcUrl });
    const key = await sessionKey(
      { secret: Buffer.from(TAB_SECRET, "hex"), rpcUrls: { [evm.network]: evm.rpcUrl } },
      tab.tabId,
      evm.network,
    );
    if (!key) throw new Error("no session key");
    expect(key.address).toBe(tab.session);
    const thief = walletAddress(devnet, "evm", "merchant");
    const steal = async (amount: bigint) => {
      const requirement = await transferRequirement(chains, evm.network, evm.usdc, thief, amount, 60);
      const resource = { url: "https://thief.example", description: "steal" };
      const signed = await signTransfer(
        requirement,
        key.signer.schemeFor(evm.network),
        resource,
        Math.floor(Date.now() / 1000),
      );
      return facilitatorSettler(facilitatorUrl).settle(signed.payload, requirement);
    };
    expect((await steal(price * 2n)).kind).not.toBe("settled");
    expect((await steal(price)).kind).toBe("settled");
    expect(await evmUsdcBalance(devnet, tab.session as `0x${string}`)).toBe(0n);
    // The wallet lost the tab and nothing more; closing returns nothing and says so.
    expect(before - (await evmUsdcBalance(devnet, user.address))).toBe(price * 2n);
    expect(await closeTab(b, tab)).toMatchObject({ status: "closed", refunded: { atomic: "0" } });
  });
});

describe("a tab over MCP", () => {
  it("pay_quote pays from the tab named by X-Tab-Token, with no approval; the token with another wallet pays nothing", async () => {
    const price = priceOf(devnet, "weather");
    const tab = await openTab(b, user, price * 2n);
    const connect = async (wallet: string) => {
      const transport = new StreamableHTTPClientTransport(new URL("http://service.test/mcp"), {
        requestInit: {
          headers: { Authorization: `Bearer ${ALICE}`, "X-Wallet-Address": wallet, "X-Tab-Token": tab.token },
        },
        fetch: async (url, init) => b.running.service.app.request(String(url), init),
      });
      const client = new Client({ name: "tab-test", version: "1" });
      await client.connect(transport);
      return client;
    };
    type Result = { isError?: boolean; structuredContent: Record<string, unknown> };
    const payOnce = async (wallet: string) => {
      const client = await connect(wallet);
      const call = async (name: string, args: Record<string, unknown>) =>
        (await client.callTool({ name, arguments: args })) as Result;
      const quote = await call("get_quote", { url: serviceUrl(devnet, "weather"), query: { city: "Paris" } });
      if (quote.isError) {
        await client.close();
        return quote;
      }
      const paid = await call("pay_quote", { quoteId: quote.structuredContent.quoteId });
      await client.close();
      return paid;
    };
    const paid = await payOnce(user.address);
    expect(paid.isError).toBeFalsy();
    expect(paid.structuredContent).toMatchObject({ status: "paid" });
    const view = await readTab(b, tab);
    expect(view).toMatchObject({ left: { atomic: price.toString() }, spent: { atomic: price.toString() } });
    // The token with another wallet pays nothing: its quote says so already.
    const refused = await payOnce(walletAddress(devnet, "evm", "payer"));
    expect(refused.structuredContent).not.toHaveProperty("quoteId");
    expect(refused.isError).toBe(true);
    expect(JSON.stringify(refused.structuredContent)).toContain("tab_invalid");
    expect((await closeTab(b, tab)).refunded?.atomic).toBe(price.toString());
  });
});

describe.runIf(process.env.DATABASE_URL)("two instances on one PostgreSQL", () => {
  let one: Booted;
  let two: Booted;
  beforeAll(async () => {
    one = await boot(devnet, { store: "postgres", env: TAB_ENV });
    two = await boot(devnet, { store: "postgres", schema: one.schema, env: TAB_ENV });
  });
  afterAll(async () => {
    await two?.close();
    await one?.close();
    if (one?.schema) await dropSchema(one.schema);
  });

  it("pay from one tab on both, close it on both at once: it returns once, exactly the rest", async () => {
    const price = priceOf(devnet, "weather");
    const tab = await openTab(one, user, price * 3n);
    await ask(one, tab.token, user.address);
    await ask(two, tab.token, user.address);
    const before = await evmUsdcBalance(devnet, user.address);
    await Promise.all([closeTab(one, tab), closeTab(two, tab)]);
    await Promise.all([one.running.payments?.reconciler.sweep(), two.running.payments?.reconciler.sweep()]);
    const view = await readTab(two, tab);
    expect(view).toMatchObject({ status: "closed", refunded: { atomic: price.toString() } });
    expect((await evmUsdcBalance(devnet, user.address)) - before).toBe(price);
  });
});

describe("opening tabs in a flood", () => {
  let flooded: Booted;
  beforeAll(async () => {
    flooded = await boot(devnet, { store: "pglite", env: { ...TAB_ENV, RATE_LIMIT_ANONYMOUS_POINTS: "3" } });
  });
  afterAll(() => flooded?.close());

  it("is held to the per-IP quota: 429 with Retry-After before anything is drafted or stored", async () => {
    const body = { walletAddress: user.address, amount: "0.01" };
    const answers = [];
    for (let i = 0; i < 5; i++) answers.push(await call(flooded, "POST", "/api/tabs", ALICE, body));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 429, 429]);
    expect(answers[3]?.headers.get("retry-after")).toBe("50");
  });
});
