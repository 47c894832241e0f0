/**
 * Soak check (issue 7): the service started as `npm start` does, used again after two minutes, on
 * both chains. Two minutes is past the point where an undrained Surfpool node stalls (about
 * 80 s). Runs always; `SKIP_SOAK=1` skips it locally when asked.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { readFileSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { createKeyPairSignerFromBytes } from "@solana/kit";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChatClient, signEvmApproval, signSolanaApproval } from "../src/client/index.js";
import { HARDHAT_TEST_KEYS } from "../src/devnet/evm/accounts.js";
import type { DevnetManifest } from "../src/devnet/index.js";
import { solanaKeypair } from "../src/devnet/solana/keys.js";

const PAUSE_MS = 125_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Finish {
  finishReason: string;
  transactionHash?: string;
  payments?: Array<{ network?: string }>;
}

describe.skipIf(process.env.SKIP_SOAK === "1")("the service after two minutes", () => {
  let dir: string;
  let child: ChildProcess;
  let url: string;
  let manifest: DevnetManifest;
  let stderr = "";

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "soak-"));
    // The real entry point, as `npm start` runs it (package.json; Node itself), on a free port.
    const [, ...args] = (
      JSON.parse(readFileSync("package.json", "utf8")) as { scripts: { start: string } }
    ).scripts.start.split(/\s+/);
    child = spawn(process.execPath, args, {
      env: {
        ...process.env,
        PORT: "0",
        HOST: "127.0.0.1",
        PAYMENTS: "devnet",
        MODEL_PROVIDER: "offline",
        DATA_DIR: join(dir, "data"),
        DEVNET_MANIFEST: join(dir, "manifest.json"),
        SHUTDOWN_GRACE_MS: "2000",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    child.stderr?.on("data", (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-20_000);
    });
    url = await listeningUrl(child).catch((error: Error) => {
      throw new Error(`${error.message}\n${stderr}`);
    });
    manifest = JSON.parse(await readFile(join(dir, "manifest.json"), "utf8")) as DevnetManifest;
    const health = await fetch(`${url}/healthz`);
    expect(health.status).toBe(200);
  }, 90_000);

  afterAll(async () => {
    if (child && child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  function payer(chain: "evm" | "solana"): string {
    const wallets = chain === "evm" ? manifest.evm.wallets : (manifest.solana?.wallets ?? []);
    const wallet = wallets.find((w) => w.role === "payer");
    if (!wallet) throw new Error(`no ${chain} payer in the manifest`);
    return wallet.address;
  }

  /** One paid chat turn, as the README's curl sends it; returns its `d:` line. */
  async function paidChat(chain: "evm" | "solana", city: string): Promise<Finish> {
    const response = await fetch(`${url}/api/chat`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${manifest.devToken}` },
      body: JSON.stringify({
        messages: [{ role: "user", content: `What's the weather in ${city}?` }],
        walletAddress: payer(chain),
      }),
      signal: AbortSignal.timeout(60_000),
    });
    expect(response.status).toBe(200);
    const lines = (await response.text()).trimEnd().split("\n");
    const last = lines.at(-1) ?? "";
    expect(last.startsWith("d:"), lines.join("\n")).toBe(true);
    return JSON.parse(last.slice(2)) as Finish;
  }

  async function expectBothChainsPay(round: number): Promise<void> {
    const evm = await paidChat("evm", ["Paris", "Berlin"][round] ?? "Paris");
    expect(evm, JSON.stringify(evm)).toMatchObject({ finishReason: "payment-complete" });
    expect(evm.transactionHash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(evm.payments?.[0]?.network).toBe(manifest.evm.network);
    if (!manifest.solana) return; // Surfpool is published for linux-x64 glibc only.
    const solana = await paidChat("solana", ["Oslo", "Tokyo"][round] ?? "Oslo");
    expect(solana, JSON.stringify(solana)).toMatchObject({ finishReason: "payment-complete" });
    expect(solana.transactionHash).toMatch(/^[1-9A-HJ-NP-Za-km-z]{64,88}$/);
    expect(solana.payments?.[0]?.network).toBe(manifest.solana.network);
  }

  /**
   * The devnet's `user` wallet (its key is not the service's) asks, signs in "its wallet" (the
   * published test keys) through the SDK, and resumes: the payment settles.
   */
  async function expectApprovalPays(chain: "evm" | "solana"): Promise<void> {
    const wallets = chain === "evm" ? manifest.evm.wallets : (manifest.solana?.wallets ?? []);
    const walletAddress = wallets.find((w) => w.role === "user")?.address;
    if (!walletAddress) throw new Error(`no ${chain} user wallet`);
    const client = new ChatClient({ baseUrl: url });
    const body = {
      messages: [{ role: "user" as const, content: "What's the weather in Lima?" }],
      walletAddress,
    };
    const first = await (await client.chat(body)).collect();
    expect(first.finish.finishReason, first.text).toBe("approval-required");
    const ask = first.awaitingApproval[0];
    if (!ask) throw new Error("no payment awaits approval");
    const answer =
      chain === "evm"
        ? await signEvmApproval(ask, privateKeyToAccount(HARDHAT_TEST_KEYS[6] as `0x${string}`))
        : await signSolanaApproval(
            ask,
            await createKeyPairSignerFromBytes((await solanaKeypair("user")).secretKey),
          );
    const second = await (
      await client.approve(
        { ...body, messages: [...body.messages, { role: "assistant", content: first.text }] },
        answer,
      )
    ).collect();
    expect(second.finish, JSON.stringify(second.finish)).toMatchObject({ finishReason: "payment-complete" });
  }

  it(
    "pays on both chains, again after two minutes (with a server key and approved in the wallet), then stops cleanly on SIGTERM",
    async () => {
      if (process.platform === "linux" && process.arch === "x64")
        expect(manifest.solana, manifest.solanaUnavailableReason).not.toBeNull();
      await expectBothChainsPay(0);
      await sleep(PAUSE_MS);
      expect((await fetch(`${url}/healthz`)).status).toBe(200);
      await expectBothChainsPay(1);
      await expectApprovalPays("evm");
      if (manifest.solana) await expectApprovalPays("solana");
      const exited = once(child, "exit");
      child.kill("SIGTERM");
      const [code] = await exited;
      expect(code, stderr).toBe(0);
    },
    PAUSE_MS + 90_000,
  );
});

/** Resolves with the URL the service prints; keeps reading stdout so the pipe never fills. */
function listeningUrl(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    if (!child.stdout) return reject(new Error("no stdout"));
    const lines = createInterface({ input: child.stdout });
    lines.on("line", (line) => {
      const match = /listening on (http:\/\/\S+)/.exec(line);
      if (match?.[1]) resolve(match[1]);
    });
    lines.on("close", () => reject(new Error("the process ended before listening")));
  });
}
