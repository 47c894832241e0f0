/**
 * Tabs (docs/payments.md#tabs) on the real devnet: the `user` wallet, whose key the service does not
 * hold, signs once to open a tab; paid asks then settle from it with no further signature; one the
 * tab cannot hold is refused, naming it; closing returns exactly what was not spent. Ledger = chain.
 * Then the attacks: the token used by another caller or with another wallet, the funding signature
 * replayed, payments racing for the tab's last cents, closing twice at once.
 */
import { type PrivateKeyAccount, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { evmUsdcBalance, walletAddress } from "../../src/devnet/testing/index.js";
import type { TabOpened, TabView } from "../../src/protocol/index.js";
import {
  type Booted,
  boot,
  chat,
  dropSchema,
  ledgerOf,
  priceOf,
  problem,
  STORES,
  useTestDevnet,
  WEATHER_PARIS,
} from "./harness.js";

const devnet = useTestDevnet();
let user: PrivateKeyAccount;
let evmUser: `0x${string}`;
const ALICE = "alice-token-0123456789";
const MALLORY = "mallory-token-0123456789";

beforeAll(() => {
  const key = devnet.secrets.evm.user;
  if (!key) throw new Error("the devnet has no user wallet");
  user = privateKeyToAccount(key);
  evmUser = walletAddress(devnet, "evm", "user");
});

async function call(b: Booted, method: string, path: string, token: string, body?: unknown, headers = {}) {
  return b.running.service.app.request(path, {
    method,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json", ...headers },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
}

/** What the user's wallet does with the opening's typed data: sign exactly it. */
function signOpening(opened: TabOpened, account = user): Promise<`0x${string}`> {
  const sign = opened.sign;
  if (sign.kind !== "evm-typed-data") throw new Error("not an EVM opening");
  const { EIP712Domain: _domain, ...types } = sign.typedData.types;
  return account.signTypedData({
    domain: { ...sign.typedData.domain, chainId: Number(sign.typedData.domain.chainId) },
    types,
    primaryType: sign.typedData.primaryType,
    message: sign.typedData.message,
  } as Parameters<PrivateKeyAccount["signTypedData"]>[0]);
}

async function openTab(b: Booted, amount: bigint, as = ALICE): Promise<TabOpened & { fund: TabView }> {
  const usd = (Number(amount) / 1e6).toFixed(6);
  const opened = (await (
    await call(b, "POST", "/api/tabs", as, { walletAddress: evmUser, amount: usd })
  ).json()) as TabOpened;
  expect(opened.status).toBe("awaiting_signature");
  const signature = await signOpening(opened);
  const funded = await call(b, "POST", `/api/tabs/${opened.tabId}/fund`, as, {
    token: opened.token,
    signature,
  });
  expect(funded.status).toBe(200);
  return { ...opened, fund: (await funded.json()) as TabView };
}

const ask = (b: Booted, tab: string, as = ALICE, wallet: string = evmUser) =>
  chat(b.running, {
    token: as,
    body: { messages: [{ role: "user", content: WEATHER_PARIS }], walletAddress: wallet, tab },
  });

describe.each(STORES)("tabs on %s", (store) => {
  let b: Booted;
  beforeAll(async () => {
    // On a PostgreSQL server the instances' shared TAB_SECRET must be set (else tabs stay off).
    const env = { AUTH_TOKENS: `alice=${ALICE},mallory=${MALLORY}`, TAB_SECRET: "5e".repeat(32) };
    b = await boot(devnet, { store, env });
  });
  afterAll(async () => {
    await b?.close();
    if (b?.schema) await dropSchema(b.schema);
  });

  it("one signature opens it; three asks settle from it; a fourth is refused; closing returns the rest", async () => {
    const price = priceOf(devnet, "weather");
    const amount = price * 3n + price / 2n;
    const before = await evmUsdcBalance(devnet, evmUser);
    const tab = await openTab(b, amount);
    expect(tab.fund).toMatchObject({ status: "open", amount: { atomic: amount.toString() } });
    expect(await evmUsdcBalance(devnet, tab.session as `0x${string}`)).toBe(amount);

    for (let i = 0; i < 3; i++) {
      const turn = await ask(b, tab.token);
      const settled = turn.payments.find((p) => p.status === "settled");
      expect(turn.payments.some((p) => p.status === "awaiting_approval")).toBe(false);
      expect(settled?.tab).toMatchObject({
        id: tab.tabId,
        left: { atomic: (amount - price * BigInt(i + 1)).toString() },
      });
      expect(settled?.payer?.toLowerCase()).toBe(tab.session.toLowerCase());
    }
    const fourth = await ask(b, tab.token);
    expect(fourth.errors[0]).toMatchObject({ code: "limit_exceeded" });
    expect(fourth.errors[0]?.message).toContain(tab.tabId);
    expect(fourth.payments.at(-1)?.status).toBe("refused");

    const closed = (await (
      await call(b, "POST", `/api/tabs/${tab.tabId}/close`, ALICE, { token: tab.token })
    ).json()) as TabView;
    expect(closed).toMatchObject({ status: "closed", refunded: { atomic: (price / 2n).toString() } });
    expect(await evmUsdcBalance(devnet, tab.session as `0x${string}`)).toBe(0n);
    // Ledger = chain: the wallet is down by exactly the three settled payments.
    expect(before - (await evmUsdcBalance(devnet, evmUser))).toBe(price * 3n);
    const rows = await ledgerOf(b.running).listByStatus(["settled"]);
    expect(rows.filter((r) => r.tabId === tab.tabId)).toHaveLength(3);
    // Closed: nothing more is paid from it.
    const after = await ask(b, tab.token);
    expect(after.errors[0]).toMatchObject({ code: "tab_invalid" });
  });

  it("the token serves neither another caller nor another wallet, and the funding is used once", async () => {
    const price = priceOf(devnet, "weather");
    const tab = await openTab(b, price * 2n);
    const other = await ask(b, tab.token, MALLORY);
    expect(other.errors[0]).toMatchObject({ code: "tab_invalid" });
    expect(other.payments.some((p) => p.status === "settled")).toBe(false);
    const payer = walletAddress(devnet, "evm", "payer");
    const elsewhere = await ask(b, tab.token, ALICE, payer);
    expect(elsewhere.errors[0]).toMatchObject({ code: "tab_invalid" });
    // Reading, closing or funding it as another caller: the same 404 as no tab at all.
    const read = await call(b, "GET", `/api/tabs/${tab.tabId}`, MALLORY, undefined, {
      "x-tab-token": tab.token,
    });
    expect(await problem(read)).toMatchObject({ status: 404, code: "tab_not_found" });
    // The funding signature again: refused, and the chain moved it once.
    const replay = await call(b, "POST", `/api/tabs/${tab.tabId}/fund`, ALICE, {
      token: tab.token,
      signature: await signOpening(tab),
    });
    expect(await problem(replay)).toMatchObject({ status: 409, code: "tab_closed" });
    expect(await evmUsdcBalance(devnet, tab.session as `0x${string}`)).toBe(price * 2n);
    const closed = await call(b, "POST", `/api/tabs/${tab.tabId}/close`, ALICE, { token: tab.token });
    expect(((await closed.json()) as TabView).refunded?.atomic).toBe((price * 2n).toString());
  });

  it("payments racing for its last cents: exactly what it holds, never more; two closes return it once", async () => {
    const price = priceOf(devnet, "weather");
    const tab = await openTab(b, price * 2n);
    const turns = await Promise.all(Array.from({ length: 6 }, () => ask(b, tab.token)));
    const settled = turns.filter((t) => t.payments.some((p) => p.status === "settled"));
    expect(settled).toHaveLength(2);
    expect(turns.filter((t) => t.errors[0]?.code === "limit_exceeded")).toHaveLength(4);
    const [one, two] = await Promise.all([
      call(b, "POST", `/api/tabs/${tab.tabId}/close`, ALICE, { token: tab.token }),
      call(b, "POST", `/api/tabs/${tab.tabId}/close`, ALICE, { token: tab.token }),
    ]);
    expect([one.status, two.status]).toEqual([200, 200]);
    const view = (await (
      await call(b, "GET", `/api/tabs/${tab.tabId}`, ALICE, undefined, { "x-tab-token": tab.token })
    ).json()) as TabView;
    expect(view).toMatchObject({
      status: "closed",
      refunded: { atomic: "0" },
      spent: { atomic: (price * 2n).toString() },
    });
  });
});
