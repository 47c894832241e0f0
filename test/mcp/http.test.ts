/**
 * docs/mcp.md: an MCP client over Streamable HTTP (the SDK's own `Client`) against the service
 * bootstrapped on the devnet (the app's fetch handler, PGlite): it finds, quotes and pays a devnet
 * service within the limits its configuration set, is refused beyond them with the chat's code
 * (`limit_exceeded`, isError), and what the ledger holds equals what moved on chain. A client that
 * declared URL elicitation is sent to the approval page and the call waits until the wallet has
 * signed; the signature goes through the face's `answerApproval` as the approval page's does
 * (`via: page`), settles on chain, ledger = chain, and hears `notifications/elicitation/complete`.
 * The same on 2026-07-28 (the v2 SDK's client, no session): find -> quote -> pay within the limits,
 * and the approval as an input-required result whose `requestState` the client echoes (a tampered
 * one is refused).
 */
import {
  Client as ModernClient,
  StreamableHTTPClientTransport as ModernTransport,
} from "@modelcontextprotocol/client";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  type CallToolResult,
  type ClientCapabilities,
  ElicitationCompleteNotificationSchema,
  ElicitRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseWallet } from "../../src/chains/index.js";
import { walletAddress } from "../../src/devnet/testing/index.js";
import { SERVER_VERSION } from "../../src/mcp/index.js";
import type { StoredApproval } from "../../src/payments/index.js";
import {
  type Awaiting,
  type Booted,
  boot,
  evmBalances,
  ledgerOf,
  priceOf,
  serviceUrl,
  signTypedDataOf,
  useTestDevnet,
} from "../payments/harness.js";

const devnet = useTestDevnet();
let booted: Booted;

beforeAll(async () => {
  booted = await boot(devnet, { store: "pglite" });
});
afterAll(async () => {
  await booted?.close();
});

type Result = CallToolResult & { structuredContent: Record<string, unknown> };

async function connect(
  limits: Record<string, string>,
  role = "payer",
  capabilities: ClientCapabilities = {},
) {
  const app = booted.running.service.app;
  const transport = new StreamableHTTPClientTransport(new URL("http://service.test/mcp"), {
    requestInit: {
      headers: {
        Authorization: `Bearer ${devnet.manifest.devToken}`,
        "X-Wallet-Address": walletAddress(devnet, "evm", role),
        "X-Spending-Limits": JSON.stringify(limits),
      },
    },
    fetch: async (url, init) => app.request(String(url), init),
  });
  const client = new Client({ name: "integration", version: "1" }, { capabilities });
  await client.connect(transport);
  const call = async (name: string, args: Record<string, unknown> = {}) =>
    (await client.callTool({ name, arguments: args })) as Result;
  return { client, call, sessionId: transport.sessionId ?? "" };
}

describe("MCP over Streamable HTTP on the devnet", () => {
  it("finds, quotes and pays within the limits, is refused beyond them; ledger = chain", async () => {
    const weather = serviceUrl(devnet, "weather");
    const price = priceOf(devnet, "weather");
    // Room for two weather calls in this session, not three.
    const perRequest = ((price * 5n) / 2n).toString().padStart(7, "0");
    const limits = { perRequest: `${perRequest.slice(0, -6)}.${perRequest.slice(-6)}` };
    const { client, call, sessionId } = await connect(limits);
    // A fixed tool list: no list_changed notification is promised (none could be sent).
    expect(client.getServerCapabilities()?.tools).toEqual({ listChanged: false });
    const before = await evmBalances(devnet);

    const found = await call("find_services", { query: "weather" });
    expect(found.isError).toBeFalsy();
    const services = found.structuredContent.services as Array<{ url: string }>;
    expect(services.map((s) => s.url)).toContain(weather);

    const quotes: string[] = [];
    for (const city of ["Paris", "Lisbon", "Oslo"]) {
      const quote = await call("get_quote", { url: weather, query: { city } });
      expect(quote.structuredContent).toMatchObject({ ok: true, chosen: { amountAtomic: price.toString() } });
      quotes.push(quote.structuredContent.quoteId as string);
    }
    const paid = [];
    for (const quoteId of quotes) paid.push(await call("pay_quote", { quoteId }));
    expect(paid.slice(0, 2).map((r) => r.structuredContent.status)).toEqual(["paid", "paid"]);
    expect(paid[0]?.structuredContent.data).toMatchObject({ untrusted: true });
    expect(paid[2]?.isError).toBe(true);
    expect(paid[2]?.structuredContent).toMatchObject({
      error: { code: "limit_exceeded", limit: "perRequest" },
    });

    // Paying a quote again pays nothing more.
    const again = await call("pay_quote", { quoteId: quotes[0] });
    expect(again.structuredContent.paymentId).toBe(paid[0]?.structuredContent.paymentId);

    const premium = await call("get_quote", {
      url: serviceUrl(devnet, "premium-report"),
      query: { topic: "solar" },
    });
    expect(premium.structuredContent).toMatchObject({ refusal: { code: "limit_exceeded" } });
    expect(premium.structuredContent.quoteId).toBeUndefined();

    const read = await call("get_payment", { paymentId: paid[0]?.structuredContent.paymentId });
    expect(read.structuredContent).toMatchObject({ status: "settled" });
    const budget = await call("get_budget");
    expect(budget.structuredContent).toMatchObject({ limits: { perRequestUsd: expect.any(String) } });

    const rows = await ledgerOf(booted.running).listByScope(sessionId);
    const settled = rows.filter((r) => r.status === "settled");
    expect(settled).toHaveLength(2);
    const after = await evmBalances(devnet);
    const sum = settled.reduce((total, r) => total + r.amount, 0n);
    expect(before.payer - after.payer).toBe(sum);
    expect(after.merchant - before.merchant).toBe(sum);
    await client.close();
  });

  const post = (init: { headers?: Record<string, string>; body: BodyInit }) =>
    booted.running.service.app.request("/mcp", {
      method: "POST",
      headers: {
        "Content-Type": "application/json",
        Accept: "application/json, text/event-stream",
        Authorization: `Bearer ${devnet.manifest.devToken}`,
        "X-Wallet-Address": walletAddress(devnet, "evm", "payer"),
        ...init.headers,
      },
      body: init.body,
      duplex: "half",
    } as RequestInit);

  it("refuses a session whose limits header is not the chat's spendingLimits (400 problem+json)", async () => {
    const response = await post({
      headers: { "X-Spending-Limits": JSON.stringify({ perRequest: "1", raiseMyself: true }) },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
    });
    expect(response.status).toBe(400);
    expect(response.headers.get("content-type")).toContain("application/problem+json");
    expect((await response.json()).code).toBe("invalid_limits");
  });

  // Found by a black-box run: a chunked body was read whole before its size was checked (GBs held).
  it("refuses a body over 64 KiB while reading it: 413, the rest never read", async () => {
    let pulled = 0;
    const chunk = new Uint8Array(16 * 1024).fill(0x20);
    const endless = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled += chunk.byteLength;
        if (pulled > 8 * 1024 * 1024) controller.close();
        else controller.enqueue(chunk);
      },
    });
    const response = await post({ body: endless });
    expect(response.status).toBe(413);
    expect((await response.json()).code).toBe("payload_too_large");
    expect(pulled).toBeLessThan(256 * 1024);
  });

  // Found by a black-box run: numbers were read as floats (1e3 was $1000, -0 and 17 digits passed).
  it.each(["1e3", "-0", "1.0000000000000001"])(
    "refuses a limit sent as the JSON number %s, as its string is refused (400 invalid_limits)",
    async (written) => {
      const response = await post({
        headers: { "X-Spending-Limits": `{"perTransaction":${written}}` },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
      });
      expect(response.status).toBe(400);
      expect((await response.json()).code).toBe("invalid_limits");
    },
  );

  // Found by a black-box run: a body nested thousands deep overflowed the stack: `internal`.
  const refusedArguments = [/nested at most 32 levels deep/, /isError\\?":true/];
  it.each([
    [100, "", 200, refusedArguments],
    [5000, "", 200, refusedArguments],
    // With an amount written as a number, the body is read keeping it as written (a reviver, which
    // recurses): too deep for that is refused whole.
    [5000, '"amount":1,', 400, [/nested too deeply/, /"code":"invalid_json"/]],
  ])(
    "a service call's body nested %i deep (%j) is refused (%i), never an internal error",
    async (depth, amount, status, said) => {
      const { client, sessionId } = await connect({ perRequest: "0.10" });
      // Written as text: the client's own serialiser would overflow on a value this deep.
      const body = `{${amount}"a":${'{"a":'.repeat(depth)}1${"}".repeat(depth)}}`;
      const url = JSON.stringify(serviceUrl(devnet, "weather"));
      const args = `{"url":${url},"method":"POST","body":${body}}`;
      const response = await post({
        headers: { "Mcp-Session-Id": sessionId, "MCP-Protocol-Version": "2025-11-25" },
        body: `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"get_quote","arguments":${args}}}`,
      });
      const text = await response.text();
      expect(response.status).toBe(status);
      for (const pattern of said) expect(text).toMatch(pattern);
      expect(text).not.toMatch(/internal/i);
      await client.close();
    },
  );

  it("a client with URL elicitation is sent to the approval page; the wallet signs; the call returns it settled", async () => {
    const user = walletAddress(devnet, "evm", "user");
    const key = devnet.secrets.evm.user;
    if (!key) throw new Error("no user key");
    const wallet = parseWallet(user);
    if (!wallet.ok) throw new Error(wallet.reason);
    const { client, call } = await connect({}, "user", { elicitation: { url: {} } });
    const running = booted.running;
    const before = await evmBalances(devnet, "user");
    const asked: Array<{ url: string; message: string }> = [];
    const completed: string[] = [];
    client.setNotificationHandler(ElicitationCompleteNotificationSchema, (notification) => {
      completed.push(notification.params.elicitationId);
    });
    let signed: Promise<unknown> = Promise.resolve();
    // Standing in for the approval page: the user's wallet signs the stored payment, and the answer
    // goes through the face as the page's does (`via: page`: no caller, only the wallet's signature).
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      const params = request.params as { url: string; message: string; elicitationId: string };
      asked.push(params);
      const row = await ledgerOf(running).get(params.elicitationId);
      const stored = row?.approval as StoredApproval;
      const signature = await signTypedDataOf(
        { approval: { sign: stored.sign } } as unknown as Awaiting,
        privateKeyToAccount(key),
      );
      signed = running.payments!.face.answerApproval({
        answer: { paymentId: params.elicitationId, kind: "signature", signature },
        wallet: wallet.wallet,
        via: { kind: "page" },
        signal: new AbortController().signal,
      });
      return { action: "accept" };
    });
    const quote = await call("get_quote", { url: serviceUrl(devnet, "weather"), query: { city: "Quito" } });
    expect(quote.structuredContent).toMatchObject({ needsApproval: true });
    const paid = await call("pay_quote", { quoteId: quote.structuredContent.quoteId });
    expect(await signed).toMatchObject({ status: "paid", transaction: expect.any(String) });
    expect(asked).toHaveLength(1);
    expect(asked[0]?.url).toMatch(/\/approve\/pay_[-0-9a-f]{36}$/);
    expect(asked[0]?.message).toMatch(
      /Approve in your wallet: pay \$0\.01 .* to 0x[0-9a-fA-F]{40} for .*weather/,
    );
    expect(paid.isError).toBeFalsy();
    expect(paid.structuredContent).toMatchObject({ status: "settled" });
    // The client declared URL elicitation, so it hears that the elicitation ended (docs/mcp.md).
    expect(completed).toEqual([paid.structuredContent.paymentId]);

    const row = await ledgerOf(running).get(String(paid.structuredContent.paymentId));
    expect(row?.status).toBe("settled");
    const after = await evmBalances(devnet, "user");
    expect(before.payer - after.payer).toBe(row?.amount);
    expect(after.merchant - before.merchant).toBe(row?.amount);
    await client.close();
  });
});

/** A 2026-07-28 client (the v2 SDK's, pinned to that revision: no initialize, no session). */
async function connectModern(role: string, capabilities: Record<string, unknown> = {}, autoFulfill = true) {
  const app = booted.running.service.app;
  const transport = new ModernTransport(new URL("http://service.test/mcp"), {
    requestInit: {
      headers: {
        Authorization: `Bearer ${devnet.manifest.devToken}`,
        "X-Wallet-Address": walletAddress(devnet, "evm", role),
      },
    },
    fetch: async (url, init) => app.request(String(url), init),
  });
  const client = new ModernClient(
    { name: "integration-2026", version: "1" },
    { capabilities, versionNegotiation: { mode: { pin: "2026-07-28" } }, inputRequired: { autoFulfill } },
  );
  await client.connect(transport);
  return client;
}

/** Signs a stored payment with the user's wallet and answers it as the approval page does. */
async function signAsPage(paymentId: string): Promise<unknown> {
  const key = devnet.secrets.evm.user;
  if (!key) throw new Error("no user key");
  const wallet = parseWallet(walletAddress(devnet, "evm", "user"));
  if (!wallet.ok) throw new Error(wallet.reason);
  const running = booted.running;
  const stored = (await ledgerOf(running).get(paymentId))?.approval as StoredApproval;
  const signature = await signTypedDataOf(
    { approval: { sign: stored.sign } } as unknown as Awaiting,
    privateKeyToAccount(key),
  );
  return running.payments!.face.answerApproval({
    answer: { paymentId, kind: "signature", signature },
    wallet: wallet.wallet,
    via: { kind: "page" },
    signal: new AbortController().signal,
  });
}

describe("MCP 2026-07-28 over Streamable HTTP on the devnet", () => {
  it("finds, quotes and pays; the approval is an input-required result the client fulfils; ledger = chain", async () => {
    const client = await connectModern("payer");
    expect(client.getServerVersion()).toMatchObject({ name: "x402-chat-agent", version: SERVER_VERSION });
    expect(client.getServerCapabilities()?.tools).toEqual({ listChanged: false });
    const call = async (name: string, args: Record<string, unknown> = {}) =>
      (await client.callTool({ name, arguments: args })) as Result;
    const weather = serviceUrl(devnet, "weather");
    const found = await call("find_services", { query: "weather" });
    expect((found.structuredContent.services as Array<{ url: string }>).map((s) => s.url)).toContain(weather);
    const quote = await call("get_quote", { url: weather, query: { city: "Lima" } });
    const paid = await call("pay_quote", { quoteId: quote.structuredContent.quoteId });
    expect(paid.structuredContent).toMatchObject({ status: "paid", transaction: expect.any(String) });
    await client.close();

    const user = await connectModern("user", { elicitation: { url: {} } });
    const asked: string[] = [];
    let signed: Promise<unknown> = Promise.resolve();
    user.setRequestHandler("elicitation/create", async (request) => {
      const url = String((request.params as { url?: string }).url);
      asked.push(url);
      signed = signAsPage(url.slice(url.lastIndexOf("/") + 1));
      return { action: "accept" };
    });
    const before = await evmBalances(devnet, "user");
    const userQuote = (await user.callTool({
      name: "get_quote",
      arguments: { url: weather, query: { city: "La Paz" } },
    })) as Result;
    expect(userQuote.structuredContent).toMatchObject({ needsApproval: true });
    const approved = (await user.callTool({
      name: "pay_quote",
      arguments: { quoteId: userQuote.structuredContent.quoteId },
    })) as Result;
    expect(await signed).toMatchObject({ status: "paid" });
    expect(asked).toHaveLength(1);
    expect(asked[0]).toMatch(/\/approve\/pay_[-0-9a-f]{36}$/);
    expect(approved.isError).toBeFalsy();
    expect(approved.structuredContent).toMatchObject({ status: "settled" });
    const row = await ledgerOf(booted.running).get(String(approved.structuredContent.paymentId));
    expect(row?.status).toBe("settled");
    const after = await evmBalances(devnet, "user");
    expect(before.payer - after.payer).toBe(row?.amount);
    expect(after.merchant - before.merchant).toBe(row?.amount);
    await user.close();
  });

  it("refuses a tampered requestState; the untouched one reads the payment", async () => {
    const user = await connectModern("user", { elicitation: { url: {} } }, false);
    const quote = (await user.callTool({
      name: "get_quote",
      arguments: { url: serviceUrl(devnet, "weather"), query: { city: "Cusco" } },
    })) as Result;
    const args = { quoteId: quote.structuredContent.quoteId };
    const first = (await user.callTool(
      { name: "pay_quote", arguments: args },
      { allowInputRequired: true },
    )) as unknown as { resultType: string; requestState: string; inputRequests: Record<string, unknown> };
    expect(first.resultType).toBe("input_required");
    expect(first.inputRequests.approve).toMatchObject({ method: "elicitation/create" });
    const [version, payload, mac] = first.requestState.split(".") as [string, string, string];
    const claims = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"));
    claims.p.paymentId = "pay_00000000-0000-4000-8000-000000000000";
    const forged = `${version}.${Buffer.from(JSON.stringify(claims)).toString("base64url")}.${mac}`;
    const retry = (requestState: string, action: string) =>
      user.callTool(
        // The retry's fields (2026-07-28), which the client's call type does not name.
        { name: "pay_quote", arguments: args, requestState, inputResponses: { approve: { action } } } as {
          name: string;
        },
        { allowInputRequired: true },
      );
    await expect(retry(forged, "accept")).rejects.toThrow(/requestState/);
    const declined = (await retry(first.requestState, "decline")) as Result;
    expect(declined.structuredContent).toMatchObject({
      status: "awaiting_approval",
      approvalUrl: expect.stringMatching(/\/approve\/pay_/),
    });
    await user.close();
  });
});
