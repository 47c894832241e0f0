/**
 * docs/deploy.md#operating-it on the real devnet and store: a key made through the operator API
 * authenticates a paid chat (and, bound to a devnet wallet, signs with the devnet's key for it, as
 * the dev token does); it is held to its scopes and wallets; the kill switch stops payments before
 * anything is signed (the chain unchanged, the model still answers) and resume restores them. With
 * DATABASE_URL, two instances on one PostgreSQL schema: a key revoked or a pause set on one holds
 * on the other at its next refresh (every 500 ms; the test drives the refresh instead of waiting).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { evmUsdcBalance, walletAddress } from "../../src/devnet/testing/index.js";
import { formatUsd } from "../../src/money/index.js";
import { hashToken } from "../../src/operator/index.js";
import type { TabOpened } from "../../src/protocol/index.js";
import {
  type Booted,
  boot,
  chat,
  dropSchema,
  evmBalances,
  ledgerOf,
  priceOf,
  rowsOf,
  useTestDevnet,
} from "./harness.js";
import { ALICE, call, signOpening, TAB_ENV, userAccount } from "./tab-helpers.js";

const devnet = useTestDevnet();
const OPERATOR = "operator-token-for-tests-0123456789abcdef";

async function operator(booted: Booted, method: string, path: string, body?: unknown): Promise<Response> {
  return booted.running.service.app.request(`/api/operator${path}`, {
    method,
    headers: {
      Authorization: `Bearer ${OPERATOR}`,
      "X-Operator": "tests",
      ...(body !== undefined ? { "Content-Type": "application/json" } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
}

async function createKey(booted: Booted, body: Record<string, unknown>): Promise<string> {
  const response = await operator(booted, "POST", "/keys", body);
  const created = (await response.json()) as { token: string };
  expect(response.status).toBe(201);
  return created.token;
}

/** An MCP `initialize` with this bearer token (and wallet header). */
async function mcpInitialize(booted: Booted, token: string, wallet?: string): Promise<Response> {
  return booted.running.service.app.request("/mcp", {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      Accept: "application/json, text/event-stream",
      Authorization: `Bearer ${token}`,
      ...(wallet ? { "X-Wallet-Address": wallet } : {}),
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
    }),
  });
}

const payer = () => walletAddress(devnet, "evm", "payer");

describe("operator keys and the kill switch (PGlite)", () => {
  let a: Booted;
  beforeAll(async () => {
    a = await boot(devnet, { store: "pglite", env: { OPERATOR_TOKEN: OPERATOR, ...TAB_ENV } });
  });
  afterAll(async () => {
    await a?.close();
  });

  it("the operator API wants the operator token", async () => {
    const response = await a.running.service.app.request("/api/operator/keys", {
      headers: { Authorization: "Bearer not-the-operator-token-0123456789abcdef" },
    });
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ code: "unauthorized" });
  });

  it("a key path that is no key's name is 404 without echoing it (controls, direction overrides)", async () => {
    for (const name of ["%E2%80%AE", "a%00", "%1B%5B2J"]) {
      const response = await operator(a, "POST", `/keys/${name}/revoke`);
      expect(response.status).toBe(404);
      const body = (await response.json()) as { code: string; detail: string };
      expect(body.code).toBe("not_found");
      expect(body.detail).toBe("No key has that name.");
    }
    expect((await operator(a, "POST", "/keys/nobody/revoke")).status).toBe(404);
  });

  it("a key made through the API pays a chat from its devnet wallet; the ledger names the key", async () => {
    const token = await createKey(a, { name: "paid-chat", wallets: [payer()], daily: "5" });
    const result = await chat(a.running, { token, wallet: payer() });
    expect(result.status).toBe(200);
    expect(result.finish.finishReason).toBe("payment-complete");
    const rows = await rowsOf(a.running, result);
    expect(rows.map((r) => [r.status, r.caller])).toEqual([["settled", "paid-chat"]]);
    const listed = (await (await operator(a, "GET", "/keys")).json()) as {
      keys: Array<{ name: string; spentTodayUsd: string }>;
    };
    expect(listed.keys.find((k) => k.name === "paid-chat")?.spentTodayUsd).not.toBe("0.00");
    expect(JSON.stringify(listed)).not.toContain(token);

    // The operator's reads: the latest payments (this one first), and none left unclear.
    const latest = (await (await operator(a, "GET", "/payments?limit=1")).json()) as {
      payments: Array<Record<string, unknown>>;
    };
    expect(latest.payments).toEqual([
      expect.objectContaining({ paymentId: rows[0]?.paymentId, caller: "paid-chat", status: "settled" }),
    ]);
    expect(latest.payments[0]?.amountUsd).toMatch(/^[0-9]+\.[0-9]{2,6}$/);
    expect(await (await operator(a, "GET", "/unclear")).json()).toEqual({ payments: [] });
    expect((await operator(a, "GET", "/payments?limit=0")).status).toBe(400);
    // A repeated parameter is refused, as on the audit routes, not read as its first value.
    expect((await operator(a, "GET", "/payments?limit=1&limit=2")).status).toBe(400);
  });

  it("a key made with a daily cap of two weather asks pays two and is refused the third, whatever the request sends", async () => {
    const price = priceOf(devnet, "weather");
    const token = await createKey(a, {
      name: "two-asks",
      wallets: [payer()],
      daily: formatUsd(2n * price),
    });
    const before = await evmBalances(devnet);
    const limits = { perTransaction: "50", perRequest: "100", daily: "100" };
    const first = await chat(a.running, { token, wallet: payer(), spendingLimits: limits });
    const second = await chat(a.running, { token, wallet: payer(), spendingLimits: limits });
    expect([first.finish.finishReason, second.finish.finishReason]).toEqual([
      "payment-complete",
      "payment-complete",
    ]);
    const third = await chat(a.running, { token, wallet: payer(), spendingLimits: limits });
    expect(third.finish.finishReason).toBe("limit-exceeded");
    expect(third.errors[0]).toMatchObject({
      code: "limit_exceeded",
      limit: "daily",
      limitUsd: formatUsd(2n * price),
    });
    expect(await rowsOf(a.running, third)).toEqual([]);
    // Ledger = chain: exactly the two asks left the wallet.
    expect((await evmBalances(devnet)).payer).toBe(before.payer - 2n * price);
  });

  it("holds a key to its scopes and its wallets, on the chat and on MCP", async () => {
    const historyOnly = await createKey(a, { name: "history-only", scopes: ["history"] });
    const chatRefused = await a.running.service.app.request("/api/chat", {
      method: "POST",
      headers: { "Content-Type": "application/json", Authorization: `Bearer ${historyOnly}` },
      body: JSON.stringify({ messages: [{ role: "user", content: "hi" }] }),
    });
    expect([chatRefused.status, ((await chatRefused.json()) as { code: string }).code]).toEqual([
      403,
      "forbidden",
    ]);
    expect((await mcpInitialize(a, historyOnly)).status).toBe(403);
    const history = await a.running.service.app.request("/api/payments", {
      headers: { Authorization: `Bearer ${historyOnly}` },
    });
    expect(history.status).toBe(200);

    const bound = await createKey(a, { name: "bound", wallets: [payer()] });
    const other = walletAddress(devnet, "evm", "payer-low");
    const before = await evmBalances(devnet, "payer-low");
    const response = await a.running.service.app.request("/api/chat", {
      method: "POST",
      headers: { "Content-Type": "application/json", Authorization: `Bearer ${bound}` },
      body: JSON.stringify({
        messages: [{ role: "user", content: "Weather in Paris?" }],
        walletAddress: other,
      }),
    });
    expect(response.status).toBe(403);
    expect(await response.json()).toMatchObject({ code: "forbidden", reason: "wallet_not_allowed" });
    expect((await mcpInitialize(a, bound, other)).status).toBe(403);
    expect((await mcpInitialize(a, bound, payer())).status).toBe(200);
    // Nor does it open a tab for another wallet (found by a black-box run, h45: the tab opened).
    const tab = await call(a, "POST", "/api/tabs", bound, { walletAddress: other, amount: "0.05" });
    expect([tab.status, await tab.json()]).toMatchObject([
      403,
      { code: "forbidden", reason: "wallet_not_allowed" },
    ]);
    expect(await evmBalances(devnet, "payer-low")).toEqual(before);
  });

  it("pause --all stops payments before signing, the model still answers; resume restores them", async () => {
    const token = await createKey(a, { name: "paused", wallets: [payer()] });
    const paused = await operator(a, "POST", "/pause", { all: true, reason: "incident 42" });
    expect(paused.status).toBe(200);
    expect(await paused.json()).toMatchObject({
      pauses: [{ scope: "all", reason: "incident 42", by: "tests" }],
    });

    const before = await evmBalances(devnet);
    // The dev token too: the switch is about payments, not keys.
    for (const bearer of [token, devnet.manifest.devToken]) {
      const result = await chat(a.running, { token: bearer, wallet: payer() });
      expect(result.status).toBe(200);
      expect(result.errors.map((e) => e.code)).toEqual(["payments_paused"]);
      expect(result.errors[0]?.message).toContain("incident 42");
      // Refused at the quote, so nobody is told a payment is under way that will not be made.
      expect(result.payments).toEqual([]);
      expect(result.finish.finishReason).toBe("payment-failed");
      // The model still answers, with the refusal and without announcing a payment.
      const said = result.events.flatMap((e) => (e.type === "text" ? [e.text] : [])).join("");
      expect(said).toContain("incident 42");
      expect(said).not.toContain("paying now");
      expect(await rowsOf(a.running, result)).toEqual([]);
    }
    expect(await evmBalances(devnet)).toEqual(before);
    const signed = await ledgerOf(a.running).listByStatus(["signed", "submitted", "unknown"]);
    expect(signed).toEqual([]);

    const resumed = await operator(a, "POST", "/resume", { all: true });
    expect(await resumed.json()).toEqual({ pauses: [] });
    const after = await chat(a.running, { token, wallet: payer() });
    expect(after.finish.finishReason).toBe("payment-complete");
  });

  // Found by a review: under a pause the user's wallet was still asked to fund a tab, and it was settled.
  it("pause --all opens and funds no tab; once resumed the same signature funds it", async () => {
    const user = userAccount(devnet);
    const body = { walletAddress: user.address, amount: "0.02" };
    const opened = (await (await call(a, "POST", "/api/tabs", ALICE, body)).json()) as TabOpened;
    expect(opened.status).toBe("awaiting_signature");
    const signature = await signOpening(opened, user);
    expect((await operator(a, "POST", "/pause", { all: true, reason: "incident 43" })).status).toBe(200);
    const before = await evmUsdcBalance(devnet, user.address);
    const refused = await call(a, "POST", "/api/tabs", ALICE, body);
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ code: "payments_paused" });
    const fund = () =>
      call(a, "POST", `/api/tabs/${opened.tabId}/fund`, ALICE, { token: opened.token, signature });
    const unfunded = await fund();
    expect(unfunded.status).toBe(403);
    expect(await unfunded.json()).toMatchObject({ code: "payments_paused" });
    expect(await evmUsdcBalance(devnet, user.address)).toBe(before);
    await operator(a, "POST", "/resume", { all: true });
    const funded = await fund();
    expect(funded.status).toBe(200);
    expect(await funded.json()).toMatchObject({ status: "open" });
    await call(a, "POST", `/api/tabs/${opened.tabId}/close`, ALICE, { token: opened.token });
  });

  // Found by a black-box run: the payments listing took any query, where the others refuse one.
  it("the payments listings refuse a query parameter they do not take", async () => {
    for (const path of ["/payments?x=1", "/payments?limit=5&x=1", "/unclear?limit=5"]) {
      const res = await operator(a, "GET", path);
      expect(res.status, path).toBe(400);
      expect(await res.json(), path).toMatchObject({ code: "invalid_request" });
    }
    expect((await operator(a, "GET", "/payments?limit=5")).status).toBe(200);
    expect((await operator(a, "GET", "/unclear")).status).toBe(200);
  });

  it("a key's pause stops that key only", async () => {
    const token = await createKey(a, { name: "one-key", wallets: [payer()] });
    expect((await operator(a, "POST", "/pause", { key: "one-key", reason: "loop" })).status).toBe(200);
    const refused = await chat(a.running, { token, wallet: payer() });
    expect(refused.errors.map((e) => e.code)).toEqual(["payments_paused"]);
    const other = await chat(a.running, { token: devnet.manifest.devToken, wallet: payer() });
    expect(other.finish.finishReason).toBe("payment-complete");
    await operator(a, "POST", "/resume", { key: "one-key" });
  });
});

describe("a key's token listed elsewhere too (AUTH_TOKENS, a SIGNERS_FILE entry)", () => {
  const LISTED = "listed-key-token-0123456789abcdef";
  let c: Booted;
  beforeAll(async () => {
    c = await boot(devnet, {
      store: "pglite",
      env: { OPERATOR_TOKEN: OPERATOR, AUTH_TOKENS: `listed-elsewhere=${LISTED}` },
    });
  });
  afterAll(async () => {
    await c?.close();
  });

  it("once the key is rotated, its old token gets 401, not the identity it is listed as", async () => {
    const plane = c.running.operator;
    if (!plane) throw new Error("no operator controls");
    // As `keys create` would have made it, its token then put in AUTH_TOKENS by the operator.
    const key = { name: "listed", scopes: ["chat", "mcp", "history"] as const, wallets: [payer()] };
    await c.running.store?.operator.createKey({
      ...key,
      scopes: [...key.scopes],
      tokenHash: hashToken(LISTED),
      perTransaction: null,
      perRequest: null,
      daily: null,
      createdAt: new Date(),
      createdBy: "tests",
      expiresAt: null,
      revokedAt: null,
    });
    await plane.cache.refresh();
    const paid = await chat(c.running, { token: LISTED, wallet: payer() });
    expect(paid.finish.finishReason).toBe("payment-complete");
    expect((await rowsOf(c.running, paid)).map((r) => r.caller)).toEqual(["listed"]);

    const rotated = await operator(c, "POST", "/keys/listed/rotate");
    expect(rotated.status).toBe(200);
    const before = await evmBalances(devnet);
    const old = await c.running.service.app.request("/api/chat", {
      method: "POST",
      headers: { "Content-Type": "application/json", Authorization: `Bearer ${LISTED}` },
      body: JSON.stringify({
        messages: [{ role: "user", content: "What's the weather in Paris?" }],
        walletAddress: payer(),
      }),
    });
    expect(old.status).toBe(401);
    expect(await old.json()).toMatchObject({
      code: "unauthorized",
      detail: expect.stringContaining("rotated"),
    });
    expect(await evmBalances(devnet)).toEqual(before);
    // And after a restart's fresh read of the store, as on another instance.
    await plane.cache.refresh();
    expect((await mcpInitialize(c, LISTED, payer())).status).toBe(401);
  });
});

describe.skipIf(!process.env.DATABASE_URL)("two instances on one PostgreSQL schema", () => {
  let a: Booted;
  let b: Booted;
  beforeAll(async () => {
    a = await boot(devnet, { store: "postgres", env: { OPERATOR_TOKEN: OPERATOR } });
    b = await boot(devnet, { store: "postgres", schema: a.schema ?? "", env: { OPERATOR_TOKEN: OPERATOR } });
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
    await dropSchema(a?.schema);
  });

  /** What the other instance's timer does every 500 ms. */
  const refreshB = () => b.running.operator?.cache.refresh();

  it("a key made on one works on the other; revoked there, it gets 401 on the chat and /mcp", async () => {
    const token = await createKey(a, { name: "shared", wallets: [payer()] });
    await refreshB();
    expect((await chat(b.running, { token, wallet: payer() })).finish.finishReason).toBe("payment-complete");
    expect((await mcpInitialize(b, token)).status).toBe(200);

    expect((await operator(a, "POST", "/keys/shared/revoke")).status).toBe(200);
    for (const booted of [a, b]) {
      if (booted === b) await refreshB();
      const response = await booted.running.service.app.request("/api/chat", {
        method: "POST",
        headers: { "Content-Type": "application/json", Authorization: `Bearer ${token}` },
        body: JSON.stringify({ messages: [{ role: "user", content: "hi" }] }),
      });
      expect(response.status).toBe(401);
      expect((await mcpInitialize(booted, token)).status).toBe(401);
    }
  });

  it("pause --all on one stops payments on both, the chain unchanged; resume restores both", async () => {
    await operator(a, "POST", "/pause", { all: true, reason: "both" });
    await refreshB();
    const before = await evmBalances(devnet);
    for (const booted of [a, b]) {
      const result = await chat(booted.running, { token: devnet.manifest.devToken, wallet: payer() });
      expect(result.errors.map((e) => e.code)).toEqual(["payments_paused"]);
    }
    expect(await evmBalances(devnet)).toEqual(before);
    await operator(b, "POST", "/resume", { all: true });
    await a.running.operator?.cache.refresh();
    for (const booted of [a, b]) {
      const result = await chat(booted.running, { token: devnet.manifest.devToken, wallet: payer() });
      expect(result.finish.finishReason).toBe("payment-complete");
    }
  });

  it("a key's daily cap is exact when both instances pay for it at once, from two wallets", async () => {
    const price = priceOf(devnet, "weather");
    const wallets = [payer(), walletAddress(devnet, "evm", "payer-2")];
    const token = await createKey(a, { name: "racing", wallets, daily: formatUsd(2n * price) });
    await refreshB();
    // Six turns at once, over both instances and both wallets: the wallets' own locks do not
    // serialize them, only the key's (its caller's) does.
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        chat((i % 2 ? b : a).running, { token, wallet: wallets[Math.floor(i / 2) % 2] ?? payer() }),
      ),
    );
    const finishes = results.map((r) => r.finish.finishReason);
    expect(finishes.filter((f) => f === "payment-complete")).toHaveLength(2);
    for (const result of results.filter((r) => r.finish.finishReason !== "payment-complete"))
      expect(result.errors.map((e) => [e.code, e.limit])).toEqual([["limit_exceeded", "daily"]]);
    const listed = (await (await operator(b, "GET", "/keys")).json()) as {
      keys: Array<{ name: string; spentTodayUsd: string }>;
    };
    expect(listed.keys.find((k) => k.name === "racing")?.spentTodayUsd).toBe(formatUsd(2n * price));
  });
});
