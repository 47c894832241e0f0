/**
 * The terminal chat as a person uses it: in a pseudo-terminal (tmux), against the whole service
 * on the real local devnet. tmux runs on a socket of this test's own, removed at the end. Without
 * tmux the suite is skipped, and says so.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Devnet } from "../../src/devnet/index.js";
import { walletAddress } from "../../src/devnet/testing/index.js";
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
function start(name: string, args: string[], width = 150): void {
  const command = `TERM=xterm-256color ${quote(process.execPath)} ${quote(BIN)} ${args.map(quote).join(" ")}; echo EXIT=$?; sleep 600`;
  tmux(
    "new-session",
    "-d",
    "-s",
    name,
    "-x",
    String(width),
    "-y",
    "60",
    `env -u NO_COLOR -u FORCE_COLOR sh -c ${quote(command)}`,
  );
}

function screen(name: string): string {
  return tmux("capture-pane", "-p", "-J", "-t", name, "-S", "-500");
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
    expect(text).toMatch(/✓ .*\$0\.01 on eip155:31337 · settled, tx 0x[0-9a-f]{64}/);
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
    const dir = mkdtempSync(join(tmpdir(), "chat-tty-"));
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
    expect(asked).toMatch(/\? .*\$0\.01 on eip155:31337 · awaiting your approval/);
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
