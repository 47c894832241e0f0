/**
 * Calls from another origin (docs/protocol.md#calls-from-other-origins-cors), in headless Chromium: a page
 * served from its own origin runs `useChat` with the SDK's `PaymentChatTransport` against the service (real
 * devnet, payments settled by the server-held `payer` key and the dev token). The service lists one page
 * origin in CORS_ORIGINS: that page completes a paid turn and reads a refusal's problem+json; the same page
 * from an unlisted origin is refused by the browser (no request body reaches the service, nothing is paid)
 * and its input stays usable after the error.
 */
import { existsSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
// @ts-expect-error: a JavaScript build script without declarations
import { ensureClientBuilt } from "../../scripts/build-client.mjs";
import type { Devnet } from "../../src/devnet/index.js";
import { evmUsdcBalance, walletAddress } from "../../src/devnet/testing/index.js";
import { closeServer, listen } from "../../src/service.js";
import { type Booted, boot, startTestDevnet, WEATHER_PARIS } from "../payments/harness.js";

const ROOT = join(import.meta.dirname, "..", "..");
const CHROMIUM =
  process.env.CHROMIUM_PATH ?? ["/usr/bin/chromium", "/usr/bin/chromium-browser"].find(existsSync);
if (!CHROMIUM || !existsSync(CHROMIUM)) {
  console.warn("\n*** test/browser/cors.test.ts SKIPPED: no Chromium found (set CHROMIUM_PATH). ***\n");
}
const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
];

function poll<T>(read: () => Promise<T> | T) {
  return expect.poll(read, { timeout: 30_000, interval: 50 });
}

/**
 * The page's script: test/browser/cross-origin/page.ts bundled for the browser (React, ai, and the
 * client package's built files, built first if stale: what `npm pack` of packages/client ships).
 */
async function bundlePage(): Promise<string> {
  await ensureClientBuilt({ types: true });
  const fromTsx = createRequire(createRequire(import.meta.url).resolve("tsx/package.json"));
  const esbuild = (await import(pathToFileURL(fromTsx.resolve("esbuild")).href)) as typeof import("esbuild");
  const result = await esbuild.build({
    absWorkingDir: ROOT,
    entryPoints: ["test/browser/cross-origin/page.ts"],
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

/** A static site on its own loopback port (its own origin) serving the page, configured for `config.api`. */
async function site(script: string, config: { api: string; token: string; wallet: string }) {
  const server: Server = createServer((req, res) => {
    if (req.url === "/page.js") {
      res.writeHead(200, { "Content-Type": "text/javascript" }).end(script);
    } else if (req.url === "/") {
      // Written at each load: the service's URL is known only once it listens.
      const html = `<!doctype html><html><head><meta charset="utf-8"><title>another site</title>
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

/** What the service was asked, by method and path, and from which origin. */
interface Seen {
  method: string;
  path: string;
  origin: string | undefined;
}

describe.skipIf(!CHROMIUM)("calls from another origin, in Chromium", { timeout: 120_000 }, () => {
  let devnet: Devnet;
  let booted: Booted;
  let service: Awaited<ReturnType<typeof listen>>;
  let browser: Browser;
  let listed: Awaited<ReturnType<typeof site>>;
  let unlisted: Awaited<ReturnType<typeof site>>;
  const seen: Seen[] = [];
  const config = { api: "", token: "", wallet: "" };

  beforeAll(async () => {
    devnet = await startTestDevnet();
    config.token = devnet.manifest.devToken;
    config.wallet = walletAddress(devnet, "evm", "payer");
    // The sites read the service's URL when a page loads: it is known once the service listens.
    const script = await bundlePage();
    listed = await site(script, config);
    unlisted = await site(script, config);
    booted = await boot(devnet, { store: "pglite", env: { CORS_ORIGINS: listed.origin } });
    service = await listen(booted.running.service.app, { host: "127.0.0.1", port: 0 });
    config.api = service.url;
    service.server.on(
      "request",
      (req: { method?: string; url?: string; headers: Record<string, unknown> }) => {
        const origin = req.headers.origin;
        seen.push({
          method: req.method ?? "",
          path: req.url ?? "",
          origin: typeof origin === "string" ? origin : undefined,
        });
      },
    );
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    if (service) await closeServer(service.server);
    await booted?.close();
    await devnet?.stop();
    listed?.server.close();
    unlisted?.server.close();
  });

  async function open(origin: string): Promise<{ page: Page; console: string[] }> {
    const page = await (await browser.newContext()).newPage();
    const messages: string[] = [];
    page.on("console", (m) => messages.push(m.text()));
    page.on("pageerror", (e) => messages.push(`pageerror: ${e.message}`));
    await page.goto(origin);
    await page
      .getByPlaceholder("Ask something")
      .waitFor({ timeout: 30_000 })
      .catch((error: unknown) => {
        throw new Error(`the page did not render: ${messages.join(" | ")}`, { cause: error });
      });
    return { page, console: messages };
  }

  async function ask(page: Page, question: string): Promise<void> {
    await page.getByPlaceholder("Ask something").fill(question);
    await page.getByRole("button", { name: "Send" }).click();
  }

  it("a listed origin completes a paid turn through useChat and PaymentChatTransport", async () => {
    const before = await evmUsdcBalance(devnet, config.wallet as `0x${string}`);
    const { page, console } = await open(listed.origin);
    await ask(page, WEATHER_PARIS);
    const card = page.locator("[data-testid=payment][data-status=settled]");
    await card.waitFor({ timeout: 60_000 });
    await poll(() => page.getByTestId("finish").getAttribute("data-finish-reason")).toBe("payment-complete");
    expect(await card.getAttribute("data-transaction")).toMatch(/^0x[0-9a-f]{64}$/);
    expect(await page.getByTestId("text").allTextContents()).not.toEqual([]);
    expect(await page.getByTestId("error").count()).toBe(0);
    expect(before - (await evmUsdcBalance(devnet, config.wallet as `0x${string}`))).toBe(10_000n);
    // The browser asked first (preflight), then sent the turn.
    const fromListed = seen.filter((s) => s.origin === listed.origin);
    expect(fromListed.map((s) => `${s.method} ${s.path}`)).toEqual(["OPTIONS /api/chat", "POST /api/chat"]);
    expect(console.filter((m) => /CORS|pageerror/.test(m))).toEqual([]);
    await page.context().close();
  });

  it("a listed origin reads a refusal's problem+json (401) and can send again", async () => {
    const { page } = await open(listed.origin);
    await page.evaluate(() => {
      (window as unknown as { __chat: { token: string } }).__chat.token = "not-a-valid-token-000000";
    });
    await ask(page, "hi");
    await poll(() => page.getByTestId("error").getAttribute("data-code")).toBe("unauthorized");
    expect(await page.getByTestId("status").textContent()).toBe("error");
    expect(await page.getByPlaceholder("Ask something").isEnabled()).toBe(true);
    await page.context().close();
  });

  it("an unlisted origin is refused by the browser: nothing is sent, nothing paid, and the input stays usable", async () => {
    const before = await evmUsdcBalance(devnet, config.wallet as `0x${string}`);
    const { page, console } = await open(unlisted.origin);
    await ask(page, WEATHER_PARIS);
    await page.getByTestId("error").waitFor({ timeout: 30_000 });
    expect(await page.getByTestId("status").textContent()).toBe("error");
    expect(await page.getByTestId("payment").count()).toBe(0);
    await poll(() => console.some((m) => m.includes("blocked by CORS policy"))).toBe(true);
    // Only the preflight reached the service: the browser never sent the turn.
    const fromUnlisted = seen.filter((s) => s.origin === unlisted.origin);
    expect(fromUnlisted.map((s) => `${s.method} ${s.path}`)).toEqual(["OPTIONS /api/chat"]);
    expect(await evmUsdcBalance(devnet, config.wallet as `0x${string}`)).toBe(before);
    // The example's input is not locked by the error: the user can type and send again.
    const input = page.getByPlaceholder("Ask something");
    expect(await input.isEnabled()).toBe(true);
    await ask(page, "again");
    await poll(() => seen.filter((s) => s.origin === unlisted.origin).length).toBe(2);
    await page.context().close();
  });
});
