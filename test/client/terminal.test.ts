/**
 * The terminal chat as a person uses it: in a pseudo-terminal (tmux), against the whole service
 * on the real local devnet. tmux runs on a socket of this test's own, removed at the end. Without
 * tmux the suite is skipped, and says so.
 */
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Devnet } from "../../src/devnet/index.js";
import { walletAddress } from "../../src/devnet/testing/index.js";
import { scratchDir } from "../helpers.js";
import { boot, startTestDevnet, WEATHER_PARIS } from "../payments/harness.js";
import { type Served, serve } from "./support.js";

const HAS_TMUX = spawnSync("tmux", ["-V"]).status === 0;
if (!HAS_TMUX) {
  console.warn("\n*** tmux is not installed: the terminal chat's pseudo-terminal test is SKIPPED ***\n");
}

const SOCKET = `x402-chat-test-${process.pid}`;
const BIN = join(import.meta.dirname, "..", "..", "bin", "x402-chat-agent.mjs");

function tmux(...args: string[]): string {
  const result = spawnSync("tmux", ["-L", SOCKET, ...args], { encoding: "utf8" });
  if (result.status !== 0) throw new Error(`tmux ${args[0]}: ${result.stderr}`);
  return result.stdout;
}

const quote = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;

/** Start the chat in a new tmux window; the shell says EXIT=<code> when it ends. */
function start(
  name: string,
  args: string[],
  width = 150,
  height = 60,
  env: Record<string, string> = {},
): void {
  const vars = Object.entries(env)
    .map(([k, v]) => `${k}=${quote(v)} `)
    .join("");
  const command = `TERM=xterm-256color ${vars}${quote(process.execPath)} ${quote(BIN)} ${args.map(quote).join(" ")}; echo EXIT=$?; sleep 600`;
  tmux(
    "new-session",
    "-d",
    "-s",
    name,
    "-x",
    String(width),
    "-y",
    String(height),
    `env -u NO_COLOR -u FORCE_COLOR sh -c ${quote(command)}`,
  );
}

function screen(name: string): string {
  return tmux("capture-pane", "-p", "-J", "-t", name, "-S", "-500");
}

/** What the window shows now (no scrollback). */
function visible(name: string): string {
  return tmux("capture-pane", "-p", "-t", name);
}

async function waitFor(name: string, pattern: RegExp, timeoutMs = 40_000): Promise<string> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const text = screen(name);
    if (pattern.test(text)) return text;
    if (Date.now() > until) throw new Error(`timed out waiting for ${pattern} in the terminal:\n${text}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function type(name: string, text: string): void {
  tmux("send-keys", "-t", name, "-l", text);
  tmux("send-keys", "-t", name, "Enter");
}

describe.skipIf(!HAS_TMUX)("terminal chat in a pseudo-terminal", () => {
  let devnet: Devnet;
  let served: Served;
  let close: () => Promise<void> = async () => {};

  beforeAll(async () => {
    devnet = await startTestDevnet();
    const booted = await boot(devnet, { store: "pglite" });
    served = await serve(booted.running);
    close = async () => {
      await served.close();
      await devnet.stop();
    };
  });

  afterAll(async () => {
    spawnSync("tmux", ["-L", SOCKET, "kill-server"]);
    await close();
  });

  it("interactive: the answer streams, the payment is one live line ending settled with its hash; Ctrl-C at the prompt quits (130)", async () => {
    const payer = walletAddress(devnet, "evm", "payer");
    // 80 columns: the status line is wider, so the live line must keep to one row to redraw cleanly.
    start("pay", ["chat", "--url", served.url, "--token", devnet.manifest.devToken, "--wallet", payer], 80);
    await waitFor("pay", /you ›/);
    type("pay", WEATHER_PARIS);
    const text = await waitFor("pay", /\(payment-complete · 1 paid\)/);
    expect(text).toMatch(/✓ .*\$0\.01 on Local EVM devnet · settled, tx 0x[0-9a-f]{64}/);
    // One line per payment: quoted, signing and settling were drawn over in place.
    expect(text.split("\n").filter((l) => / · (quoted|signing|settling|settled)/.test(l))).toHaveLength(1);
    expect(text).toContain("Paris");
    // The conversation goes on, then Ctrl-C at the prompt quits.
    await waitFor("pay", /\(payment-complete · 1 paid\)\n+you ›/);
    tmux("send-keys", "-t", "pay", "C-c");
    await waitFor("pay", /EXIT=130/);
  });

  it("an approval asks y/n and signs with --key-file; Ctrl-D quits with the last turn's code (0)", async () => {
    const key = devnet.secrets.evm.user;
    if (!key) throw new Error("no user wallet");
    const dir = scratchDir("chat-tty");
    const keyFile = join(dir, "user.key");
    writeFileSync(keyFile, key, { mode: 0o600 });
    start("approve", ["chat", "--url", served.url, "--key-file", keyFile]);
    await waitFor("approve", /you ›/);
    // Ctrl-C at the question: nothing signed, the payment left pending, back at the prompt.
    type("approve", WEATHER_PARIS);
    await waitFor("approve", /Approve and sign with 0x[0-9a-fA-F]{40}\? \[y\/N\]/);
    tmux("send-keys", "-t", "approve", "C-c");
    await waitFor("approve", /\(interrupted: the payment stays pending until it expires\)\n+you ›/);
    // Asked again, answered yes.
    tmux("send-keys", "-t", "approve", "C-l");
    tmux("clear-history", "-t", "approve");
    type("approve", WEATHER_PARIS);
    const asked = await waitFor("approve", /Approve and sign with 0x[0-9a-fA-F]{40}\? \[y\/N\]/);
    expect(asked).toMatch(/\? .*\$0\.01 on Local EVM devnet · awaiting your approval/);
    expect(asked).toContain("Approval needed: $0.01");
    type("approve", "y");
    const text = await waitFor("approve", /\(payment-complete · 1 paid\)/);
    expect(text).toContain("Signed. Resuming...");
    expect(text).toMatch(/✓ .* · settled, tx 0x[0-9a-f]{64}/);
    expect(text).not.toContain(key.slice(2));
    await waitFor("approve", /\(payment-complete · 1 paid\)\n+you ›/);
    tmux("send-keys", "-t", "approve", "C-d");
    await waitFor("approve", /EXIT=0/);
  });

  it("--devnet reads the service, token and wallet from the manifest; a mistyped role is one line and exit 2; payments lists what was paid", async () => {
    const dir = scratchDir("chat-devnet");
    const manifest = join(dir, "manifest.json");
    // As `npm start` leaves it once it listens: the devnet's manifest with the service's URL.
    writeFileSync(manifest, JSON.stringify({ ...devnet.manifest, chatUrl: served.url }), { mode: 0o600 });
    const env = { DEVNET_MANIFEST: manifest, X402_CHAT_URL: "http://127.0.0.1:9" };
    start("typo", ["chat", "--devnet", "usr", WEATHER_PARIS], 80, 24, env);
    const typo = await waitFor("typo", /EXIT=\d+/);
    expect(typo).toContain("EXIT=2");
    const said = typo.split("\n").filter((l) => l.startsWith("x402-chat-agent:"));
    expect(said).toEqual(["x402-chat-agent: --devnet usr: not a role; the roles: payer, payer-low, user"]);
    expect(typo).not.toContain("settled");

    start("devnet", ["chat", "--devnet=payer", WEATHER_PARIS], 80, 24, env);
    const paid = await waitFor("devnet", /EXIT=\d+/);
    expect(paid).toContain("EXIT=0");
    expect(paid).toMatch(/✓ .*\$0\.01 on Local EVM devnet · settled, tx 0x[0-9a-f]{64}/);

    start("history", ["chat", "payments", "--devnet"], 80, 24, env);
    const listed = await waitFor("history", /EXIT=\d+/);
    expect(listed).toContain("EXIT=0");
    const rows = listed.split("\n").filter((l) => / settled /.test(l));
    expect(rows.length).toBeGreaterThanOrEqual(2); // this one and the interactive test's
    for (const row of rows) {
      expect(row).toMatch(
        /^\d{4}-\d{2}-\d{2} \d{2}:\d{2} settled +\$0\.01 .* eip155:31337 +0x[0-9a-f]{4}…[0-9a-f]{4}$/,
      );
      expect(row.length).toBeLessThanOrEqual(80);
    }
    // Another caller (no token) sees none of them.
    start("nobody", ["chat", "payments", "--url", served.url], 80, 24);
    const none = await waitFor("nobody", /EXIT=\d+/);
    expect(none).toContain("EXIT=0");
    expect(none).toContain("No payments: they are listed per bearer token");
    expect(none).not.toContain("settled");
  });

  it("--help fits an 80x24 terminal; --help all has every option", async () => {
    start("help", ["chat", "--help"], 80, 24);
    await waitFor("help", /EXIT=0/);
    const shown = visible("help");
    // The whole usage is on the screen at once: its first line and the exit status after its last.
    expect(shown).toContain("Usage: x402-chat-agent chat [question] [options]");
    expect(shown).toContain("130 interrupted.");
    expect(shown).toContain("EXIT=0");
    start("help-all", ["chat", "--help", "all"], 80, 60);
    const all = await waitFor("help-all", /EXIT=0/);
    for (const option of ["--networks", "--max-tokens", "--no-retry", "--cursor", "--sse"])
      expect(all).toContain(option);
  });

  it("one-shot without a key: shows what to sign and the body to resume with, Enter leaves it pending (8)", async () => {
    const user = walletAddress(devnet, "evm", "user");
    start("pending", ["chat", WEATHER_PARIS, "--url", served.url, "--wallet", user]);
    const asked = await waitFor(
      "pending",
      /Paste the signature \(0x\.\.\.\), n to reject, or Enter to leave it pending:/,
    );
    expect(asked).toContain('"primaryType": "TransferWithAuthorization"');
    expect(asked).toMatch(/"approval":\{"paymentId":"pay_[-0-9a-f]{36}","signature":"<SIGNATURE>"\}/);
    tmux("send-keys", "-t", "pending", "Enter");
    await waitFor("pending", /EXIT=8/);
  });
});
