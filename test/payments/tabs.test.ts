/**
 * Tabs (docs/payments.md#tabs) on the real devnet: the `user` wallet, whose key the service does not
 * hold, signs once to open a tab; paid asks then settle from it with no further signature; one the
 * tab cannot hold is refused, naming it; closing returns exactly what was not spent. Ledger = chain.
 * Then the attacks: the token used by another caller or with another wallet, the funding signature
 * replayed, payments racing for the tab's last cents, closing twice at once.
 */
import type { PrivateKeyAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChatClient, evmSignInWallet, TabClient } from "../../src/client/index.js";
import { evmUsdcBalance, solanaUsdcBalance, walletAddress } from "../../src/devnet/testing/index.js";
import {
  type Booted,
  boot,
  dropSchema,
  ledgerOf,
  priceOf,
  problem,
  STORES,
  useTestDevnet,
} from "./harness.js";
import {
  ALICE,
  ask,
  call,
  closeTab,
  lamportsOf,
  MALLORY,
  openSolanaTab,
  openTab,
  readTab,
  signOpening,
  TAB_ENV,
  userAccount,
} from "./tab-helpers.js";

const devnet = useTestDevnet();
let user: PrivateKeyAccount;

beforeAll(() => {
  user = userAccount(devnet);
});

describe.each(STORES)("tabs on %s", (store) => {
  let b: Booted;
  beforeAll(async () => {
    // On a PostgreSQL server the instances' shared TAB_SECRET must be set (else tabs stay off).
    b = await boot(devnet, { store, env: TAB_ENV });
  });
  afterAll(async () => {
    await b?.close();
    if (b?.schema) await dropSchema(b.schema);
  });

  it("one signature opens it; three asks settle from it; a fourth is refused; closing returns the rest", async () => {
    const price = priceOf(devnet, "weather");
    const amount = price * 3n + price / 2n;
    const before = await evmUsdcBalance(devnet, user.address);
    const tab = await openTab(b, user, amount);
    expect(tab.fund).toMatchObject({ status: "open", amount: { atomic: amount.toString() } });
    expect(await evmUsdcBalance(devnet, tab.session as `0x${string}`)).toBe(amount);

    for (let i = 0; i < 3; i++) {
      const turn = await ask(b, tab.token, user.address);
      const settled = turn.payments.find((p) => p.status === "settled");
      expect(turn.payments.some((p) => p.status === "awaiting_approval")).toBe(false);
      const left = (amount - price * BigInt(i + 1)).toString();
      expect(settled?.tab).toMatchObject({ id: tab.tabId, left: { atomic: left } });
      expect(settled?.payer?.toLowerCase()).toBe(tab.session.toLowerCase());
      // The budget meter of every update with one shows the tab, before and after the payment.
      const quoted = turn.payments.find((p) => p.status === "quoted");
      expect(quoted?.budget?.tab).toMatchObject({ id: tab.tabId });
      expect(settled?.budget?.tab).toMatchObject({ id: tab.tabId, left: { atomic: left } });
    }
    const fourth = await ask(b, tab.token, user.address);
    expect(fourth.errors[0]).toMatchObject({ code: "limit_exceeded" });
    expect(fourth.errors[0]?.message).toContain(tab.tabId);
    expect(fourth.payments.at(-1)?.status).toBe("refused");
    expect(fourth.payments.at(-1)?.budget?.tab?.left.atomic).toBe((price / 2n).toString());

    const closed = await closeTab(b, tab);
    expect(closed).toMatchObject({ status: "closed", refunded: { atomic: (price / 2n).toString() } });
    expect(await evmUsdcBalance(devnet, tab.session as `0x${string}`)).toBe(0n);
    // Ledger = chain: the wallet is down by exactly the three settled payments.
    expect(before - (await evmUsdcBalance(devnet, user.address))).toBe(price * 3n);
    const rows = await ledgerOf(b.running).listByStatus(["settled"]);
    expect(rows.filter((r) => r.tabId === tab.tabId)).toHaveLength(3);
    // Closed: nothing more is paid from it.
    const after = await ask(b, tab.token, user.address);
    expect(after.errors[0]).toMatchObject({ code: "tab_invalid" });

    // The wallet is the account: signed in with it, it lists its tabs (no token in them).
    const fetchApp = (async (url: string | URL | Request, init?: RequestInit) =>
      b.running.service.app.request(String(url), init)) as typeof fetch;
    const baseUrl = "http://127.0.0.1:3000";
    const session = await new ChatClient({ baseUrl, fetch: fetchApp }).signIn(
      evmSignInWallet(user, devnet.manifest.evm.network),
    );
    const listed = await new TabClient({ baseUrl, token: session.token, fetch: fetchApp }).list();
    expect(listed.find((t) => t.tabId === tab.tabId)).toMatchObject({
      status: "closed",
      spent: { atomic: (price * 3n).toString() },
    });
    expect(JSON.stringify(listed)).not.toContain(tab.token);
    const asCaller = await call(b, "GET", "/api/tabs", ALICE);
    expect(await problem(asCaller)).toMatchObject({ status: 401, code: "unauthorized" });
  });

  it("the token serves neither another caller nor another wallet, and the funding is used once", async () => {
    const price = priceOf(devnet, "weather");
    const tab = await openTab(b, user, price * 2n);
    const other = await ask(b, tab.token, user.address, MALLORY);
    expect(other.errors[0]).toMatchObject({ code: "tab_invalid" });
    expect(other.payments.some((p) => p.status === "settled")).toBe(false);
    const elsewhere = await ask(b, tab.token, walletAddress(devnet, "evm", "payer"));
    expect(elsewhere.errors[0]).toMatchObject({ code: "tab_invalid" });
    // Found by a black-box run: with a server key for the wallet, a named tab was not read at all,
    // and the key paid from the whole wallet a client believed capped by its tab.
    const payer = walletAddress(devnet, "evm", "payer");
    const payerBefore = await evmUsdcBalance(devnet, payer as `0x${string}`);
    for (const token of [tab.token, `x4t_${"A".repeat(43)}`]) {
      const keyed = await ask(b, token, payer, devnet.manifest.devToken);
      expect(keyed.errors[0], token).toMatchObject({ code: "tab_invalid" });
      expect(keyed.payments.some((p) => p.status === "settled")).toBe(false);
    }
    expect(await evmUsdcBalance(devnet, payer as `0x${string}`)).toBe(payerBefore);
    // Reading, closing or funding it as another caller: the same 404 as no tab at all.
    const read = await call(b, "GET", `/api/tabs/${tab.tabId}`, MALLORY, undefined, {
      "x-tab-token": tab.token,
    });
    expect(await problem(read)).toMatchObject({ status: 404, code: "tab_not_found" });
    // The funding signature again: refused, and the chain moved it once.
    const signature = await signOpening(tab, user);
    const replay = await call(b, "POST", `/api/tabs/${tab.tabId}/fund`, "alice-token-0123456789", {
      token: tab.token,
      signature,
    });
    expect(await problem(replay)).toMatchObject({ status: 409, code: "tab_closed" });
    expect(await evmUsdcBalance(devnet, tab.session as `0x${string}`)).toBe(price * 2n);
    expect((await closeTab(b, tab)).refunded?.atomic).toBe((price * 2n).toString());
  });

  it("payments racing for its last cents: exactly what it holds, never more; two closes return it once", async () => {
    const price = priceOf(devnet, "weather");
    const tab = await openTab(b, user, price * 2n);
    const turns = await Promise.all(Array.from({ length: 6 }, () => ask(b, tab.token, user.address)));
    const settled = turns.filter((t) => t.payments.some((p) => p.status === "settled"));
    expect(settled).toHaveLength(2);
    expect(turns.filter((t) => t.errors[0]?.code === "limit_exceeded")).toHaveLength(4);
    const [one, two] = await Promise.all([closeTab(b, tab), closeTab(b, tab)]);
    expect([one.status, two.status]).toEqual(["closed", "closed"]);
    const view = await readTab(b, tab);
    expect(view).toMatchObject({
      status: "closed",
      refunded: { atomic: "0" },
      spent: { atomic: (price * 2n).toString() },
    });
  });

  it("Solana: one signature opens it, three asks settle from it, closing returns the rest and the account's rent", async () => {
    const price = priceOf(devnet, "weather");
    const amount = price * 3n + price / 2n;
    const secret = devnet.secrets.solana.user;
    if (!secret) throw new Error("the devnet has no Solana user wallet");
    const wallet = { address: walletAddress(devnet, "solana", "user"), secret };
    const [before, lamportsBefore] = await Promise.all([
      solanaUsdcBalance(devnet, wallet.address),
      lamportsOf(devnet, wallet.address),
    ]);
    const tab = await openSolanaTab(b, wallet, amount);
    expect(tab.sign.kind).toBe("solana-transaction");
    expect(tab.fund).toMatchObject({ status: "open", amount: { atomic: amount.toString() } });
    expect(await solanaUsdcBalance(devnet, tab.session)).toBe(amount);

    for (let i = 0; i < 3; i++) {
      const turn = await ask(b, tab.token, wallet.address);
      expect(turn.payments.some((p) => p.status === "awaiting_approval")).toBe(false);
      const settled = turn.payments.find((p) => p.status === "settled");
      expect(settled?.tab).toMatchObject({ left: { atomic: (amount - price * BigInt(i + 1)).toString() } });
      expect(settled?.payer).toBe(tab.session);
    }
    const fourth = await ask(b, tab.token, wallet.address);
    expect(fourth.errors[0]).toMatchObject({ code: "limit_exceeded" });
    expect(fourth.errors[0]?.message).toContain(tab.tabId);

    const closed = await closeTab(b, tab);
    expect(closed).toMatchObject({ status: "closed", refunded: { atomic: (price / 2n).toString() } });
    // Ledger = chain: down by exactly three prices; the session holds nothing, not even an account.
    expect(before - (await solanaUsdcBalance(devnet, wallet.address))).toBe(price * 3n);
    expect(await solanaUsdcBalance(devnet, tab.session)).toBe(0n);
    expect(await lamportsOf(devnet, tab.session)).toBe(0n);
    // In SOL the tab cost the wallet two base fees: its funding's and the session's return's.
    expect(lamportsBefore - (await lamportsOf(devnet, wallet.address))).toBe(10_000n);
    const rows = await ledgerOf(b.running).listByStatus(["settled"]);
    expect(rows.filter((r) => r.tabId === tab.tabId)).toHaveLength(3);
  });
});
