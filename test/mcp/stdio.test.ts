/**
 * A desktop MCP client's way in (docs/mcp.md#why-stdio-is-a-bridge). The SDK's own `Client` spawns
 * `x402-chat-agent mcp` (bin/x402-chat-agent.mjs) over stdio, as Claude Desktop or VS Code would, and the
 * bridge speaks Streamable HTTP to the service listening on loopback on the real devnet: it finds, quotes and
 * pays within the limits its flags set, is refused beyond them with the chat's code, ledger = chain. A URL
 * elicitation passes through the bridge; the approval page's endpoints (what the page calls once the wallet
 * signs) settle the payment, and the waiting call returns it settled.
 */
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import {
  type CallToolResult,
  type ClientCapabilities,
  ElicitRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseWallet } from "../../src/chains/index.js";
import type { Devnet } from "../../src/devnet/index.js";
import { walletAddress } from "../../src/devnet/testing/index.js";
import type { StoredApproval } from "../../src/payments/index.js";
import { type Served, serve } from "../client/support.js";
import {
  type Awaiting,
  type Booted,
  boot,
  evmBalances,
  ledgerOf,
  serviceUrl,
  signTypedDataOf,
  startTestDevnet,
} from "../payments/harness.js";

const BIN = join(import.meta.dirname, "..", "..", "bin", "x402-chat-agent.mjs");

let devnet: Devnet;
let booted: Booted;
let served: Served;

beforeAll(async () => {
  devnet = await startTestDevnet();
  booted = await boot(devnet, { store: "pglite" });
  served = await serve(booted.running);
});
afterAll(async () => {
  await served?.close();
  await devnet?.stop();
});

type Result = CallToolResult & { structuredContent: Record<string, unknown> };

/** The SDK's client, spawning the bridge with the wallet and limits a desktop config would set. */
async function spawnBridge(
  role: string,
  limits: Record<string, string>,
  capabilities: ClientCapabilities = {},
) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, "mcp", "--url", served.url, "--limits", JSON.stringify(limits)],
    env: {
      PATH: process.env.PATH ?? "",
      X402_CHAT_TOKEN: devnet.manifest.devToken,
      X402_CHAT_WALLET: walletAddress(devnet, "evm", role),
      DEVNET_MANIFEST: "/nonexistent",
    },
    stderr: "pipe",
  });
  const client = new Client({ name: "desktop", version: "1" }, { capabilities });
  await client.connect(transport);
  const call = async (name: string, args: Record<string, unknown> = {}) =>
    (await client.callTool({ name, arguments: args })) as Result;
  return { client, call };
}

describe("x402-chat-agent mcp over stdio", () => {
  it("finds, quotes and pays within the session's limits, is refused beyond them; ledger = chain", async () => {
    const { client, call } = await spawnBridge("payer", { perRequest: "0.015" });
    const before = await evmBalances(devnet);

    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toContain("pay_quote");
    const found = await call("find_services", { query: "weather" });
    const weather = serviceUrl(devnet, "weather");
    expect((found.structuredContent.services as Array<{ url: string }>).map((s) => s.url)).toContain(weather);

    const first = await call("get_quote", { url: weather, query: { city: "Paris" } });
    const second = await call("get_quote", { url: weather, query: { city: "Rome" } });
    const paid = await call("pay_quote", { quoteId: first.structuredContent.quoteId });
    expect(paid.structuredContent).toMatchObject({ status: "paid", data: { untrusted: true } });
    const refused = await call("pay_quote", { quoteId: second.structuredContent.quoteId });
    expect(refused.isError).toBe(true);
    expect(refused.structuredContent).toMatchObject({
      error: { code: "limit_exceeded", limit: "perRequest" },
    });

    const listed = await call("list_payments", { limit: 5 });
    const items = listed.structuredContent.items as Array<{ paymentId: string; status: string }>;
    expect(items[0]).toMatchObject({ paymentId: paid.structuredContent.paymentId, status: "settled" });
    const row = await ledgerOf(booted.running).get(String(paid.structuredContent.paymentId));
    expect(row?.status).toBe("settled");
    const after = await evmBalances(devnet);
    expect(before.payer - after.payer).toBe(row?.amount);
    expect(after.merchant - before.merchant).toBe(row?.amount);
    await client.close();
  });

  it("passes a URL elicitation through to the client; the wallet signs; the call returns it settled", async () => {
    const key = devnet.secrets.evm.user;
    const wallet = parseWallet(walletAddress(devnet, "evm", "user"));
    if (!key || !wallet.ok) throw new Error("no user wallet");
    const { client, call } = await spawnBridge("user", {}, { elicitation: { url: {} } });
    const running = booted.running;
    const before = await evmBalances(devnet, "user");
    const asked: string[] = [];
    let signed: Promise<unknown> = Promise.resolve();
    // What the approval page does when the user opens the URL: it reads what to sign from
    // GET /api/approvals/:id, the wallet signs it, and it answers POST /api/approvals/:id, with no
    // bearer token (the URL carries no secret; only the wallet's signature settles it).
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      const params = request.params as { url: string; elicitationId: string };
      asked.push(params.url);
      const api = `${served.url}/api/approvals/${params.elicitationId}`;
      const shown = (await (await fetch(api)).json()) as { approval: { sign: StoredApproval["sign"] } };
      const signature = await signTypedDataOf(
        { approval: { sign: shown.approval.sign } } as unknown as Awaiting,
        privateKeyToAccount(key),
      );
      signed = fetch(api, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ signature, walletAddress: wallet.wallet.address }),
      }).then((r) => r.json());
      return { action: "accept" };
    });
    const quote = await call("get_quote", { url: serviceUrl(devnet, "weather"), query: { city: "Lima" } });
    const paid = await call("pay_quote", { quoteId: quote.structuredContent.quoteId });
    expect(await signed).toMatchObject({ status: "settled" });
    expect(asked).toEqual([expect.stringMatching(/\/approve\/pay_[-0-9a-f]{36}$/)]);
    expect(paid.structuredContent).toMatchObject({ status: "settled" });
    const row = await ledgerOf(running).get(String(paid.structuredContent.paymentId));
    const after = await evmBalances(devnet, "user");
    expect(before.payer - after.payer).toBe(row?.amount);
    await client.close();
  });
});
