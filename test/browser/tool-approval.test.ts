/**
 * Approvals as the AI SDK's own tool-approval parts
 * (docs/clients.md#approvals-as-ai-sdk-tool-approval-parts), in headless Chromium: a `useChat` page with no
 * x402 code (test/browser/tool-approval/page.ts: AI SDK calls only, plus `new PaymentChatTransport({ ...,
 * signer })` over the browser's EIP-1193 wallet) against the service and the devnet started here. The wallet
 * is the devnet `user`, whose key the service does not hold, so every payment waits for it: an approval signs
 * in the wallet, the payment settles on chain and the tool part ends `output-available`; a rejection ends
 * `output-denied`, nothing paid; on Solana (when the devnet runs it) a signing function over the wallet's key
 * signs, and it settles. The `payer` wallet, whose payments the service's key signs, gets one automatic
 * approval part per payment, its reason in words: one approval part per payment either way.
 */
import { existsSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import {
  createKeyPairFromBytes,
  getBase64EncodedWireTransaction,
  getBase64Encoder,
  getTransactionDecoder,
  partiallySignTransaction,
} from "@solana/kit";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toViemTypedData } from "../../src/client/index.js";
import type { Devnet } from "../../src/devnet/index.js";
import { evmUsdcBalance, solanaUsdcBalance, walletAddress } from "../../src/devnet/testing/index.js";
import type { WalletRequest } from "../../src/protocol/index.js";
import { closeServer, listen } from "../../src/service.js";
import { type Booted, boot, startTestDevnet, WEATHER_PARIS } from "../payments/harness.js";

const ROOT = join(import.meta.dirname, "..", "..");
const CHROMIUM =
  process.env.CHROMIUM_PATH ?? ["/usr/bin/chromium", "/usr/bin/chromium-browser"].find(existsSync);
if (!CHROMIUM || !existsSync(CHROMIUM)) {
  console.warn(
    "\n*** test/browser/tool-approval.test.ts SKIPPED: no Chromium found (set CHROMIUM_PATH). ***\n",
  );
}
const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
];

type TypedData = Extract<WalletRequest, { kind: "evm-typed-data" }>["typedData"];

/** The page's script, bundled for the browser (React, ai, and the SDK's source). */
async function bundlePage(): Promise<string> {
  const fromTsx = createRequire(createRequire(import.meta.url).resolve("tsx/package.json"));
  const esbuild = (await import(pathToFileURL(fromTsx.resolve("esbuild")).href)) as typeof import("esbuild");
  const result = await esbuild.build({
    absWorkingDir: ROOT,
    entryPoints: ["test/browser/tool-approval/page.ts"],
    bundle: true,
    platform: "browser",
    format: "esm",
    target: "es2022",
    define: { "process.env.NODE_ENV": '"production"' },
    write: false,
    logLevel: "warning",
  });
  const out = result.outputFiles[0];
  if (!out) throw new Error("esbuild wrote nothing");
  return out.text;
}

/** A static site on its own loopback port serving the page, configured for `config.api`. */
async function site(script: string, config: { api: string; wallet: string }) {
  const server: Server = createServer((req, res) => {
    if (req.url === "/page.js") {
      res.writeHead(200, { "Content-Type": "text/javascript" }).end(script);
    } else if (req.url === "/") {
      const html = `<!doctype html><html><head><meta charset="utf-8"><title>a useChat page</title>
<script>window.__chat = ${JSON.stringify(config)};</script></head>
<body><div id="root"></div><script type="module" src="/page.js"></script></body></html>`;
      res.writeHead(200, { "Content-Type": "text/html" }).end(html);
    } else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (!address || typeof address === "string") throw new Error("no port");
  return { origin: `http://127.0.0.1:${address.port}`, server };
}

describe.skipIf(!CHROMIUM)("useChat tool-approval parts, in Chromium", { timeout: 180_000 }, () => {
  let devnet: Devnet;
  let booted: Booted;
  let service: Awaited<ReturnType<typeof listen>>;
  let browser: Browser;
  let page: Awaited<ReturnType<typeof site>>;
  const config: { api: string; wallet: string; token?: string; networks?: string[] } = {
    api: "",
    wallet: "",
  };
  let evmWallet = "";
  /** What the wallet was asked to sign (primary type and `from`, `to`, `value`). */
  const signed: Array<Record<string, unknown>> = [];

  beforeAll(async () => {
    devnet = await startTestDevnet();
    const key = devnet.secrets.evm.user;
    if (!key) throw new Error("the devnet has no user wallet");
    evmWallet = privateKeyToAccount(key).address;
    config.wallet = evmWallet;
    page = await site(await bundlePage(), config);
    booted = await boot(devnet, { store: "pglite", env: { CORS_ORIGINS: page.origin } });
    service = await listen(booted.running.service.app, { host: "127.0.0.1", port: 0 });
    config.api = service.url;
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    if (service) await closeServer(service.server);
    await booted?.close();
    await devnet?.stop();
    page?.server.close();
  });

  /**
   * A context whose pages have `window.ethereum`: an EIP-1193 wallet holding the devnet `user` key,
   * answering `eth_signTypedData_v4` in Node (as an extension would, out of the page).
   */
  async function contextWithWallet(): Promise<BrowserContext> {
    const key = devnet.secrets.evm.user;
    if (!key) throw new Error("the devnet has no user wallet");
    const account = privateKeyToAccount(key);
    const context = await browser.newContext();
    await context.exposeFunction("__walletSignTypedData", async (address: string, json: string) => {
      const typedData = JSON.parse(json) as TypedData;
      signed.push({ address, primaryType: typedData.primaryType, ...typedData.message });
      if (address.toLowerCase() !== account.address.toLowerCase())
        throw new Error("not this wallet's address");
      return account.signTypedData(
        toViemTypedData({ kind: "evm-typed-data", method: "eth_signTypedData_v4", typedData }) as Parameters<
          typeof account.signTypedData
        >[0],
      );
    });
    await context.addInitScript(
      ({ address, chainId }) => {
        const w = window as unknown as {
          __walletSignTypedData(address: string, json: string): Promise<string>;
          ethereum: unknown;
        };
        w.ethereum = {
          async request({ method, params }: { method: string; params?: unknown[] }): Promise<unknown> {
            if (method === "eth_accounts" || method === "eth_requestAccounts") return [address];
            if (method === "eth_chainId") return `0x${chainId.toString(16)}`;
            if (method === "eth_signTypedData_v4")
              return w.__walletSignTypedData(String(params?.[0]), String(params?.[1]));
            throw Object.assign(new Error(`test wallet: ${method} is not supported`), { code: 4200 });
          },
        };
      },
      { address: account.address, chainId: devnet.manifest.evm.chainId },
    );
    return context;
  }

  /** A tab of the page in `context`, the question asked, once the tool part asks for approval. */
  async function ask(context?: BrowserContext): Promise<{ page: Page; console: string[] }> {
    const tab = await (context ?? (await contextWithWallet())).newPage();
    const messages: string[] = [];
    tab.on("console", (m) => messages.push(m.text()));
    tab.on("pageerror", (e) => messages.push(`pageerror: ${e.message}`));
    await tab.goto(page.origin);
    await tab.getByPlaceholder("Ask something").fill(WEATHER_PARIS);
    await tab.getByRole("button", { name: "Send" }).click();
    await tab
      .locator("[data-testid=tool][data-state=approval-requested]")
      .waitFor({ timeout: 60_000 })
      .catch((error: unknown) => {
        throw new Error(`no approval part: ${messages.join(" | ")}`, { cause: error });
      });
    return { page: tab, console: messages };
  }

  it("approve: the wallet signs, the payment settles on chain, the tool part ends output-available", async () => {
    const wallet = evmWallet as `0x${string}`;
    const before = await evmUsdcBalance(devnet, wallet);
    const { page: tab, console } = await ask();
    expect(await tab.locator("[data-testid=tool]").count()).toBe(1);
    const summary = await tab.getByTestId("summary").textContent();
    expect(summary).toMatch(/^Pay \$0\.01 in .+ to 0x[0-9a-fA-F]{40} for .+ on Local EVM devnet, from 0x/);
    expect(signed).toHaveLength(0);
    await tab.getByRole("button", { name: "Approve" }).click();
    const tool = tab.locator("[data-testid=tool][data-state=output-available]");
    await tool.waitFor({ timeout: 60_000 }).catch((error: unknown) => {
      throw new Error(`not settled: ${console.join(" | ")}`, { cause: error });
    });
    const output = JSON.parse((await tool.getAttribute("data-output")) ?? "{}") as Record<string, string>;
    expect(output.status).toBe("settled");
    expect(output.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    expect(signed).toEqual([
      expect.objectContaining({
        address: wallet,
        primaryType: "TransferWithAuthorization",
        from: wallet,
        value: "10000",
      }),
    ]);
    expect(before - (await evmUsdcBalance(devnet, wallet))).toBe(10_000n);
    await expect.poll(() => tab.getByTestId("status").textContent(), { timeout: 30_000 }).toBe("ready");
    expect(await tab.getByTestId("error").count()).toBe(0);
    expect(console.filter((m) => /pageerror|CORS/.test(m))).toEqual([]);
    await tab.context().close();
  });

  it("a payment the limits allow without the wallet is an automatic approval part with its reason", async () => {
    const payer = walletAddress(devnet, "evm", "payer") as `0x${string}`;
    const before = await evmUsdcBalance(devnet, payer);
    // The payer's payments are signed by the service's key, for a caller with the service's token.
    Object.assign(config, { wallet: payer, token: devnet.manifest.devToken });
    try {
      const tab = await (await contextWithWallet()).newPage();
      await tab.goto(page.origin);
      await tab.getByPlaceholder("Ask something").fill(WEATHER_PARIS);
      await tab.getByRole("button", { name: "Send" }).click();
      await expect.poll(() => tab.getByTestId("status").textContent(), { timeout: 60_000 }).toBe("ready");
      // One approval part per payment: the one payment of the turn, approved automatically.
      const tools = tab.locator("[data-testid=tool]");
      expect(await tools.count()).toBe(1);
      expect(await tools.first().getAttribute("data-automatic")).toBe("true");
      expect(await tools.first().getAttribute("data-approved")).toBe("true");
      expect(await tools.first().getAttribute("data-state")).toBe("output-available");
      expect(await tab.getByTestId("reason").textContent()).toMatch(
        /^Approved automatically: \$0\.01 is within your \$[\d.]+ limit per payment.*left today$/,
      );
      expect(signed.filter((s) => s.address === payer)).toEqual([]);
      expect(before - (await evmUsdcBalance(devnet, payer))).toBe(10_000n);
      await tab.context().close();
    } finally {
      Object.assign(config, { wallet: evmWallet, token: undefined });
    }
  });

  it("reject: nothing is signed or paid, the tool part ends output-denied", async () => {
    const wallet = evmWallet as `0x${string}`;
    const before = await evmUsdcBalance(devnet, wallet);
    const signedBefore = signed.length;
    const { page: tab } = await ask();
    await tab.getByRole("button", { name: "Reject" }).click();
    await tab.locator("[data-testid=tool][data-state=output-denied]").waitFor({ timeout: 60_000 });
    await expect.poll(() => tab.getByTestId("status").textContent(), { timeout: 30_000 }).toBe("ready");
    expect(signed).toHaveLength(signedBefore);
    expect(await evmUsdcBalance(devnet, wallet)).toBe(before);
    await tab.context().close();
  });

  it("Solana: the wallet's signTransaction (a function) signs, the payment settles, output-available", async (ctx) => {
    const solana = devnet.manifest.solana;
    const user = solana?.wallets.find((w) => w.role === "user");
    const secret = user && devnet.secrets.solana[user.name];
    if (!solana || !user || !secret) {
      console.warn("tool-approval.test.ts: the devnet has no Solana here; the Solana approval is skipped");
      ctx.skip();
      return;
    }
    const keyPair = await createKeyPairFromBytes(secret);
    const context = await browser.newContext();
    let asked = 0;
    // The wallet's signTransaction, done in Node as an extension would, out of the page.
    await context.exposeFunction("solanaSignTransaction", async (base64: string) => {
      asked += 1;
      const transaction = getTransactionDecoder().decode(getBase64Encoder().encode(base64));
      return getBase64EncodedWireTransaction(await partiallySignTransaction([keyPair], transaction));
    });
    const before = await solanaUsdcBalance(devnet, user.address);
    Object.assign(config, { wallet: user.address, networks: [solana.network] });
    try {
      const { page: tab, console } = await ask(context);
      expect(await tab.getByTestId("summary").textContent()).toContain(`from ${user.address}`);
      await tab.getByRole("button", { name: "Approve" }).click();
      const tool = tab.locator("[data-testid=tool][data-state=output-available]");
      await tool.waitFor({ timeout: 60_000 }).catch((error: unknown) => {
        throw new Error(`not settled: ${console.join(" | ")}`, { cause: error });
      });
      const output = JSON.parse((await tool.getAttribute("data-output")) ?? "{}") as Record<string, string>;
      expect(output.status).toBe("settled");
      expect(output.transaction).toMatch(/^[1-9A-HJ-NP-Za-km-z]{64,88}$/);
      expect(asked).toBe(1);
      expect(before - (await solanaUsdcBalance(devnet, user.address))).toBe(10_000n);
    } finally {
      Object.assign(config, { wallet: evmWallet, networks: undefined });
      await context.close();
    }
  });
});
