/**
 * The operator page (`/operator`, docs/operator-page.md) as an operator uses it, in headless
 * Chromium (Debian's `chromium`, playwright-core) against the real service, its operator API and
 * the devnet: a wrong token is refused in words; the right one signs in (kept in sessionStorage,
 * never in the URL or localStorage); a payment made before shows in Recent payments; a key is
 * created and its token read once (it works, then the page forgets it); pausing all payments with
 * a reason shows the reason and who paused, and refuses a server-key payment (`payments_paused`,
 * then listed under Refusals with the reason); one key is paused and resumed; revoking the key
 * (after a confirmation) stops its token; signing out forgets the operator token, and a kept token
 * the service no longer takes signs the page out. axe-core finds no violation at each stage.
 * Without a Chromium the suite says so and is skipped.
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Devnet } from "../../src/devnet/index.js";
import { walletAddress } from "../../src/devnet/testing/index.js";
import { closeServer, listen } from "../../src/service.js";
import { TOKEN_STORAGE_KEY } from "../../web/src/operator/model.js";
import { type Booted, boot, chat, startTestDevnet } from "../payments/harness.js";
import { axeViolations } from "./axe.js";

const ROOT = join(import.meta.dirname, "..", "..");
const ARTIFACTS = join(ROOT, ".data", "artifacts", "web");
const CHROMIUM = [process.env.CHROMIUM_PATH ?? "/usr/bin/chromium", "/usr/bin/chromium-browser"].find((p) =>
  existsSync(p),
);
if (!CHROMIUM) console.warn("\n*** test/browser/operator-page.test.ts SKIPPED: no Chromium found. ***\n");

const OPERATOR_TOKEN = `op-${randomBytes(24).toString("hex")}`;
const KEY = "e2e-bot";
// With a long word (a ticket's id, say): found by a black-box run, it made the page 3,000 px wide.
const REASON = `Incident 42: the weather service overcharges, ticket ${"A1b2C3".repeat(50)}`;
const OPERATOR = "Ada on call";

describe.skipIf(!CHROMIUM)("the operator page in Chromium", { timeout: 120_000 }, () => {
  let devnet: Devnet;
  let booted: Booted;
  let server: Awaited<ReturnType<typeof listen>>;
  let browser: Browser;
  const pageErrors: string[] = [];
  const elsewhere: string[] = [];

  beforeAll(async () => {
    execFileSync(process.execPath, [join(ROOT, "web", "build.mjs"), "--if-stale"], { stdio: "inherit" });
    mkdirSync(ARTIFACTS, { recursive: true });
    devnet = await startTestDevnet();
    booted = await boot(devnet, { store: "pglite", env: { OPERATOR_TOKEN } });
    server = await listen(booted.running.service.app, { host: "127.0.0.1", port: 0 });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
      ],
    });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    if (server) await closeServer(server.server);
    await booted?.close();
    await devnet?.stop();
  });

  /** A payment the devnet's server key signs for the devnet's token (the `payer` wallet). */
  const serverKeyChat = () =>
    chat(booted.running, { wallet: walletAddress(devnet, "evm", "payer"), token: devnet.manifest.devToken });

  /** What a bearer token may read: GET /api/payments (the history scope). */
  const historyStatus = async (token: string) =>
    (await fetch(`${server.url}/api/payments`, { headers: { Authorization: `Bearer ${token}` } })).status;

  async function open(): Promise<Page> {
    const context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
    const page = await context.newPage();
    page.on("pageerror", (error) => pageErrors.push(error.message));
    page.on("console", (m) => {
      if (m.type() === "error" && !m.text().startsWith("Failed to load resource")) pageErrors.push(m.text());
    });
    page.on("request", (r) => {
      if (!r.url().startsWith(`${server.url}/`) && !r.url().startsWith("data:")) elsewhere.push(r.url());
    });
    await page.goto(`${server.url}/operator`);
    return page;
  }

  async function signIn(page: Page, token: string): Promise<void> {
    await page.getByLabel("Operator token").fill(token);
    await page.getByLabel("Your name (optional)").fill(OPERATOR);
    await page.getByRole("button", { name: "Sign in" }).click();
  }

  it("signs in with the operator token, creates, pauses, resumes and revokes, with axe at 0", async () => {
    const paid = await serverKeyChat();
    expect(paid.finish.finishReason).toBe("payment-complete");

    const page = await open();
    await page.getByLabel("Operator token").waitFor();
    expect(await axeViolations(page), "sign-in").toEqual([]);
    await signIn(page, "not-the-operator-token-but-long-enough-to-try");
    await page.locator("#signin-error").waitFor();
    expect(await page.locator("#signin-error").textContent()).toBe(
      "The service refused this operator token.",
    );
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);

    await signIn(page, OPERATOR_TOKEN);
    await page.getByRole("heading", { name: "Keys", level: 2 }).waitFor();
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Pause switch");
    // The token stays in this tab's sessionStorage: not in the URL, not in localStorage.
    expect(page.url()).toBe(`${server.url}/operator`);
    expect((await page.evaluate(() => Object.values(sessionStorage))).sort()).toEqual(
      [OPERATOR, OPERATOR_TOKEN].sort(),
    );
    expect(await page.evaluate(() => localStorage.length)).toBe(0);
    // The payment made before: in Recent payments, paid, in dollars.
    const row = page
      .getByTestId("payments-table")
      .locator("[data-testid=operator-payment][data-status=settled]");
    await row.first().waitFor();
    expect(await row.first().textContent()).toContain("$0.01");
    await page.locator("[data-testid=pause-state][data-paused=none]").waitFor();
    expect(await axeViolations(page), "signed in").toEqual([]);

    // A key: its token shown once, working; "Done" and the page no longer holds it.
    await page.getByLabel("Name").fill(KEY);
    await page.getByLabel("Cap per day (USD)").fill("5");
    await page.getByRole("checkbox", { name: /history/ }).check();
    await page.getByRole("button", { name: "Create key" }).click();
    const tokenField = page.getByTestId("new-token");
    await tokenField.waitFor();
    let keyToken = await tokenField.inputValue();
    expect(keyToken.length).toBeGreaterThanOrEqual(32);
    expect(await page.getByTestId("new-token-box").textContent()).toMatch(/shown only this once/);
    const keyRow = page.locator(`[data-testid=key-row][data-key=${KEY}]`);
    await page.locator(`[data-testid=key-row][data-key=${KEY}][data-status=active]`).waitFor();
    expect(await keyRow.textContent()).toContain("$5.00 a day");
    expect(await axeViolations(page), "key created, token shown").toEqual([]);
    await page.screenshot({ path: join(ARTIFACTS, "operator-page.png"), fullPage: true });
    expect(await historyStatus(keyToken)).toBe(200);
    await page.getByRole("button", { name: "Done" }).click();
    await tokenField.waitFor({ state: "detached" });
    expect(await page.content()).not.toContain(keyToken);

    // Rotate asks first, as revoke does (h52: one click ended the token in use); Cancel changes nothing.
    await page.getByRole("button", { name: `Rotate ${KEY}` }).click();
    await page.getByRole("button", { name: "Cancel" }).click();
    expect(await historyStatus(keyToken)).toBe(200);
    await page.getByRole("button", { name: `Rotate ${KEY}` }).click();
    const rotateIt = page.getByRole("button", { name: `Yes, rotate ${KEY}` });
    expect(await rotateIt.evaluate((b) => b === document.activeElement)).toBe(true);
    await rotateIt.click();
    await tokenField.waitFor();
    const rotated = await tokenField.inputValue();
    expect(await historyStatus(keyToken)).toBe(401);
    expect(await historyStatus(rotated)).toBe(200);
    keyToken = rotated;
    await page.getByRole("button", { name: "Done" }).click();
    await tokenField.waitFor({ state: "detached" });

    // Pause all payments with a reason: the page says so, and a server-key payment is refused.
    await page.getByLabel("Reason").fill(REASON);
    await page.getByRole("button", { name: "Pause all payments" }).click();
    const paused = page.locator("[data-testid=pause-state][data-paused=all]");
    await paused.waitFor();
    expect(await paused.textContent()).toContain(REASON);
    expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
    expect(await paused.textContent()).toContain(`by ${OPERATOR}`);
    const refused = await serverKeyChat();
    expect(refused.payments.some((p) => p.status === "settled")).toBe(false);
    expect(JSON.stringify([refused.errors, refused.payments])).toContain("payments_paused");
    // The refusal, from the audit trail, on the page at its next read: its code and the reason.
    const refusal = page
      .getByTestId("refusals-table")
      .locator("[data-testid=operator-refusal]")
      .filter({ hasText: "payments_paused" });
    await refusal.first().waitFor();
    expect(await refusal.first().textContent()).toContain(REASON);
    expect(await axeViolations(page), "paused").toEqual([]);

    await page.getByRole("button", { name: "Resume all payments" }).click();
    await page.locator("[data-testid=pause-state][data-paused=none]").waitFor();

    // One key paused: listed with its reason, marked in the keys table; then resumed.
    await page.getByLabel("What to pause").selectOption(KEY);
    await page.getByLabel("Reason").fill("Its wallet is being rotated");
    await page.getByRole("button", { name: `Pause key ${KEY}` }).click();
    const pausedKey = page.locator(`[data-testid=paused-key][data-key=${KEY}]`);
    await pausedKey.waitFor();
    expect(await pausedKey.textContent()).toContain("Its wallet is being rotated");
    expect(await keyRow.textContent()).toContain("paused");
    await page.getByRole("button", { name: `Resume ${KEY}` }).click();
    await pausedKey.waitFor({ state: "detached" });

    // Revoke, after the confirmation: the key's token stops working.
    await page.getByRole("button", { name: `Revoke ${KEY}` }).click();
    const confirm = page.getByRole("button", { name: `Yes, revoke ${KEY}` });
    await confirm.waitFor();
    expect(await confirm.evaluate((b) => b === document.activeElement)).toBe(true);
    expect(await axeViolations(page), "revoke confirmation").toEqual([]);
    await confirm.click();
    await page.locator(`[data-testid=key-row][data-key=${KEY}][data-status=revoked]`).waitFor();
    expect(await historyStatus(keyToken)).toBe(401);

    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByLabel("Operator token").waitFor();
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    // A kept token the service no longer takes (OPERATOR_TOKEN changed): signed out, told why.
    await page.evaluate(
      (key) => sessionStorage.setItem(key, "an-operator-token-from-before-it-changed"),
      TOKEN_STORAGE_KEY,
    );
    await page.reload();
    await page.getByText("The service no longer takes this operator token: sign in again.").waitFor();
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    expect(pageErrors).toEqual([]);
    expect(elsewhere).toEqual([]);
    await page.context().close();
  });
});
