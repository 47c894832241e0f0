/**
 * docs/deploy.md#cluster: two service instances (`npm run cluster`, scripts/cluster.ts), each its own
 * process, on one PostgreSQL ledger, one Redis (when REDIS_URL is set) and one devnet. Paid turns
 * go through both at once for the same wallet under a tight daily limit: the instances together
 * never spend over it, and the ledger equals the chain (every settled row's transfer is on chain,
 * the payer's decrease and the merchant's increase equal the settled sum). Needs DATABASE_URL (the
 * instances cannot share an embedded PGlite): skipped without it, as the other PostgreSQL suites.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Cluster, startCluster } from "../scripts/cluster.js";
import { walletAddress } from "../src/devnet/testing/index.js";
import { readOperatorToken } from "../src/operator/token-file.js";
import { openStore, type Store } from "../src/store/index.js";
import {
  chatRequest,
  dropSchema,
  evmBalances,
  readChat,
  serviceUrl,
  uniqueSchema,
} from "./payments/harness.js";
import { evmAddressOf, usdcTransfersOf } from "./transfers.js";

type Row = Awaited<ReturnType<Store["ledger"]["listByScope"]>>[number];

const databaseUrl = process.env.DATABASE_URL;
const schema = uniqueSchema("cluster");
const dataDir = mkdtempSync(join(tmpdir(), "cluster-data-"));
let cluster: Cluster | undefined;
let store: Store | undefined;

/** $0.05 a day; the weather costs $0.01: of 12 asks, 5 may be paid. */
const DAILY = "0.05";
const TURNS_PER_INSTANCE = 6;

describe.skipIf(!databaseUrl)("two instances on one ledger and one devnet", () => {
  beforeAll(async () => {
    const output: string[] = [];
    cluster = await startCluster({
      instances: 2,
      solana: false,
      output: (i, line) => output.push(`[${i}] ${line}`),
      env: {
        ...process.env,
        DATABASE_URL: databaseUrl,
        DATABASE_SCHEMA: schema,
        MODEL_PROVIDER: "offline",
        LOG_LEVEL: "warn",
        RATE_LIMIT_POINTS: "1000",
        RATE_LIMIT_ANONYMOUS_POINTS: "1000",
        RECONCILE_INTERVAL_MS: "3600000",
        DATA_DIR: dataDir,
        OPERATOR_TOKEN: "",
      },
    });
    store = await openStore({ databaseUrl: databaseUrl ?? "", schema });
  }, 120_000);

  afterAll(async () => {
    await store?.close();
    await cluster?.stop();
    await dropSchema(schema);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("starts each instance on its own port", () => {
    const urls = cluster?.instances.map((i) => new URL(i.url)) ?? [];
    expect(urls).toHaveLength(2);
    expect(new Set(urls.map((u) => u.port)).size).toBe(2);
  });

  // Found by a black-box run: each instance made its own operator token into one shared file, and
  // every instance but the last refused the token the file held.
  it("gives every instance the one operator token written where the CLI reads it", async () => {
    const token = await readOperatorToken(dataDir);
    expect(token).toBeDefined();
    for (const instance of cluster?.instances ?? []) {
      const keys = await fetch(`${instance.url}/api/operator/keys`, {
        headers: { Authorization: `Bearer ${token}`, "X-Operator": "tests" },
      });
      expect(keys.status).toBe(200);
    }
  });

  it("pays through both at once for one wallet: no overspend across instances, ledger = chain", async () => {
    const c = cluster as Cluster;
    const payer = evmAddressOf(c.devnet, "payer");
    const before = await evmBalances(c.devnet);
    const turn = (url: string) =>
      fetch(
        `${url}/api/chat`,
        chatRequest(
          {
            messages: [{ role: "user", content: "What's the weather in Paris?" }],
            walletAddress: payer,
            spendingLimits: { daily: DAILY },
          },
          { Authorization: `Bearer ${c.token}` },
        ),
      ).then(readChat);
    const results = await Promise.all(
      c.instances.flatMap((instance) => Array.from({ length: TURNS_PER_INSTANCE }, () => turn(instance.url))),
    );
    const finishes = results.map((r) => r.finish.finishReason);
    // Every turn ends as paid or as refused by the limit; nothing else (no error, nothing unclear).
    expect(finishes.filter((f) => f !== "payment-complete" && f !== "limit-exceeded")).toEqual([]);

    const rows: Row[] = (
      await Promise.all(results.map((r) => store?.ledger.listByScope(r.requestId) ?? []))
    ).flat();
    const settled = rows.filter((r) => r.status === "settled");
    const settledSum = settled.reduce((sum, r) => sum + r.amount, 0n);
    expect(rows.filter((r) => r.status !== "settled")).toEqual([]);
    expect(settled.length).toBe(finishes.filter((f) => f === "payment-complete").length);
    // The daily limit held across both instances: $0.05 at most, and it was reached.
    expect(settledSum).toBe(50_000n);
    const after = await evmBalances(c.devnet);
    expect(before.payer - after.payer).toBe(settledSum);
    expect(after.merchant - before.merchant).toBe(settledSum);
    for (const row of settled) {
      expect(await usdcTransfersOf(c.devnet, row.txHash ?? "")).toEqual([
        { from: payer, to: evmAddressOf(c.devnet, "merchant"), value: row.amount },
      ]);
    }
    expect(new Set(settled.map((r) => r.txHash)).size).toBe(settled.length);
  });

  it("a quote from one instance is paid on the other: they share one quote secret", async () => {
    const c = cluster as Cluster;
    const connect = async (url: string) => {
      const transport = new StreamableHTTPClientTransport(new URL("/mcp", url), {
        requestInit: {
          headers: {
            Authorization: `Bearer ${c.token}`,
            "X-Wallet-Address": walletAddress(c.devnet, "evm", "payer-2"),
          },
        },
      });
      const client = new Client({ name: "cluster", version: "1" });
      await client.connect(transport);
      return client;
    };
    const [a, b] = await Promise.all((c.instances.map((i) => i.url) as [string, string]).map(connect));
    try {
      const weather = serviceUrl(c.devnet, "weather");
      const quote = (await a?.callTool({
        name: "get_quote",
        arguments: { url: weather, query: { city: "Lima" } },
      })) as {
        structuredContent: { quoteId?: string };
      };
      const quoteId = quote.structuredContent.quoteId;
      expect(quoteId).toBeTruthy();
      const paid = (await b?.callTool({ name: "pay_quote", arguments: { quoteId } })) as {
        isError?: boolean;
        structuredContent: { status?: string; paymentId?: string };
      };
      expect(paid.isError ?? false).toBe(false);
      expect(paid.structuredContent.status).toBe("paid");
      const row = await store?.ledger.get(paid.structuredContent.paymentId ?? "");
      expect(row?.status).toBe("settled");
      expect(await usdcTransfersOf(c.devnet, row?.txHash ?? "")).toEqual([
        {
          from: walletAddress(c.devnet, "evm", "payer-2").toLowerCase(),
          to: evmAddressOf(c.devnet, "merchant"),
          value: row?.amount,
        },
      ]);
    } finally {
      await Promise.all([a?.close(), b?.close()]);
    }
  });
});
