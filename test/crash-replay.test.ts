import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type PrivateKeyAccount, privateKeyToAccount } from "viem/accounts";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Devnet } from "../src/devnet/index.js";
import { walletAddress } from "../src/devnet/testing/index.js";
import type { StreamEvent } from "../src/protocol/index.js";
import {
  type Awaiting,
  awaiting,
  dropSchema,
  evmBalances,
  readChat,
  STORES,
  serviceUrl,
  signTypedDataOf,
  startTestDevnet,
  uniqueSchema,
  WEATHER_PARIS,
} from "./payments/harness.js";

/**
 * docs/protocol.md#after-a-crash-leases-and-rebuilt-answers: the process answering an approval (or a request
 * with an Idempotency-Key) is killed with SIGKILL once its payment settled, before it could store the
 * outcome. Restarted on the same database, the same answer sent again is rebuilt from the ledger (the settled
 * payment, its transaction) instead of a lasting 409, and nothing is paid again. The real entry point runs
 * against a devnet held by this test, so the chain outlives the process, and a model that keeps talking after
 * the payment, so the kill lands before the turn could end.
 */

function startArgs(): string[] {
  const pkg = JSON.parse(readFileSync("package.json", "utf8")) as { scripts: { start: string } };
  return pkg.scripts.start.split(/\s+/).slice(1);
}

class Proc {
  readonly child: ChildProcess;
  private out = "";
  readonly exited: Promise<void>;

  constructor(env: Record<string, string>) {
    const inherited = { ...process.env };
    // The store is chosen here, not by the test runner's environment.
    delete inherited.DATABASE_URL;
    delete inherited.REDIS_URL;
    this.child = spawn(process.execPath, startArgs(), {
      env: { ...inherited, PORT: "0", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const take = (chunk: Buffer) => {
      this.out += chunk.toString();
    };
    this.child.stdout?.on("data", take);
    this.child.stderr?.on("data", take);
    this.exited = new Promise((resolve) => this.child.on("exit", () => resolve()));
  }

  async url(): Promise<string> {
    for (;;) {
      const match = this.out.match(/listening on (http:\/\/\S+)/);
      if (match?.[1]) return match[1];
      if (this.child.exitCode !== null) throw new Error(`exited before listening:\n${this.out.slice(-2000)}`);
      await new Promise((resolve) => {
        this.child.stdout?.once("data", resolve);
        this.child.once("exit", resolve);
      });
    }
  }

  async kill9(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill("SIGKILL");
    await this.exited;
  }
}

const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${url}/api/chat`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "text/plain", ...headers },
    body: JSON.stringify(body),
  });

/** Read a stream until a payment update with `status`, then SIGKILL the process; returns that update. */
async function killAt(proc: Proc, response: Response, status: string) {
  expect(response.status).toBe(200);
  const reader = response.body?.getReader();
  if (!reader) throw new Error("no body");
  const decoder = new TextDecoder();
  let text = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`the stream ended before a ${status} payment:\n${text}`);
    text += decoder.decode(value, { stream: true });
    for (const line of text.split("\n").slice(0, -1)) {
      if (!line.startsWith("p:")) continue;
      const update = JSON.parse(line.slice(2)) as { status: string; transaction?: string; paymentId: string };
      if (update.status === status) {
        await proc.kill9();
        await reader.cancel().catch(() => {});
        return update;
      }
    }
  }
}

/**
 * An OpenAI-compatible model: asked first, it calls pay_and_fetch for the weather; told the payment
 * was made, it talks on and never finishes (so the turn is still open, its outcome not yet stored,
 * when the process is killed); told anything else (an approval is awaited), it stops.
 */
function payingModel(payUrl: () => string): Server {
  const chunk = (delta: unknown, finish: string | null = null) =>
    `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 0, model: "m", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  return createServer((req, res) => {
    let raw = "";
    req.on("data", (c: Buffer) => {
      raw += c.toString();
    });
    req.on("end", () => {
      const messages = (JSON.parse(raw) as { messages: { role: string; content?: unknown }[] }).messages;
      const results = messages.filter((m) => m.role === "tool").map((m) => String(m.content));
      res.writeHead(200, { "content-type": "text/event-stream" });
      if (results.length === 0) {
        const args = JSON.stringify({ url: payUrl(), method: "GET", query: { city: "Paris" } });
        res.write(
          chunk({
            role: "assistant",
            tool_calls: [
              {
                index: 0,
                id: "call_1",
                type: "function",
                function: { name: "pay_and_fetch", arguments: args },
              },
            ],
          }),
        );
        res.end(`${chunk({}, "tool_calls")}data: [DONE]\n\n`);
      } else if (!results.some((r) => /"status":\s*"paid"/.test(r))) {
        res.write(chunk({ role: "assistant", content: "Please approve the payment in your wallet." }));
        res.end(`${chunk({}, "stop")}data: [DONE]\n\n`);
      } else {
        const timer = setInterval(() => res.write(chunk({ role: "assistant", content: "word " })), 100);
        res.on("close", () => clearInterval(timer));
      }
    });
  });
}

/**
 * The idempotency lease the service runs with here (the dead process's claim lapses after it). A
 * live process counts its claim lost after two thirds of it without a renewal: at 1.5 s, a busy
 * 2-core machine (browser tests beside it) stalled the service that long and it gave up its own
 * claim mid-payment. 5 s holds through such stalls and costs the wait after each kill.
 */
const LEASE_MS = 5000;

/**
 * Until the dead process's claim has lapsed: before that, 409 is the right answer (it may still run).
 * PGlite: no wait, the restarted process holds the directory and lapses what it finds at once.
 */
const leaseLapsed = (store: string, killedAt: number) =>
  store === "pglite"
    ? Promise.resolve()
    : new Promise((resolve) => setTimeout(resolve, Math.max(0, killedAt + LEASE_MS + 200 - Date.now())));

/** The stream of a request sent again; before the fix it was refused with 409 for 24 h. */
async function answered(attempt: number, response: Response) {
  const refused = response.status === 200 ? undefined : await response.text();
  expect({ attempt, status: response.status, refused }).toEqual({ attempt, status: 200, refused: undefined });
  return readChat(response);
}

let devnet: Devnet;
let model: Server;
let modelUrl: string;
let dir: string;
let user: PrivateKeyAccount;
const token = "crash-replay-token-0123456789abcdef";

beforeAll(async () => {
  devnet = await startTestDevnet();
  const key = devnet.secrets.evm.user;
  const payer = devnet.manifest.evm.wallets.find((w) => w.role === "payer");
  const payerKey = payer ? devnet.secrets.evm[payer.name] : undefined;
  if (!key || !payerKey) throw new Error("the devnet has no user or payer wallet");
  user = privateKeyToAccount(key);
  model = payingModel(() => serviceUrl(devnet, "weather"));
  await new Promise<void>((resolve) => model.listen(0, "127.0.0.1", resolve));
  modelUrl = `http://127.0.0.1:${(model.address() as AddressInfo).port}/v1`;
  dir = await mkdtemp(join(tmpdir(), "crash-replay-"));
  await writeFile(
    join(dir, "signers.json"),
    JSON.stringify([{ chain: "evm", privateKey: payerKey, tokens: [token] }]),
  );
});

afterAll(async () => {
  model?.closeAllConnections();
  model?.close();
  await devnet?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe.each(STORES)("a process killed once a payment settled (%s)", { timeout: 180_000 }, (store) => {
  const procs: Proc[] = [];
  let env: Record<string, string>;
  let schema: string | undefined;

  beforeAll(() => {
    const m = devnet.manifest;
    const origins = [m.facilitatorUrl, ...m.services.map((s) => s.url)].map((u) => new URL(u).origin);
    schema = store === "postgres" ? uniqueSchema("crash") : undefined;
    env = {
      PAYMENTS: "external",
      DATA_DIR: join(dir, `data-${store}`),
      MODEL_PROVIDER: "openai-compatible",
      OPENAI_COMPATIBLE_BASE_URL: modelUrl,
      MODEL_MAP: "aimodel-2.0-flash-exp=m",
      RATE_LIMIT_POINTS: "1000",
      RATE_LIMIT_ANONYMOUS_POINTS: "1000",
      RPC_URLS: `${m.evm.network}=${m.evm.rpcUrl}`,
      ASSETS: `${m.evm.network}=${m.evm.usdc}`,
      DISCOVERY_URLS: m.discoveryUrl,
      ALLOW_PRIVATE_ORIGINS: [...new Set(origins)].join(","),
      SIGNERS_FILE: join(dir, "signers.json"),
      // The dead process's claim lapses soon after the restarted one listens; long enough that a live
      // attempt renewing every third of it does not lose it on a loaded machine (LEASE_MS above).
      IDEMPOTENCY_LEASE_MS: String(LEASE_MS),
      ...(schema && process.env.DATABASE_URL
        ? { DATABASE_URL: process.env.DATABASE_URL, DATABASE_SCHEMA: schema }
        : {}),
    };
  });
  // One process at a time on the store, as in production: the restarted one ends with its test.
  afterEach(async () => {
    for (const p of procs) await p.kill9();
  });
  afterAll(async () => {
    await dropSchema(schema);
  });
  const start = async () => {
    const proc = new Proc(env);
    procs.push(proc);
    return { proc, url: await proc.url() };
  };

  const settledOf = (events: StreamEvent[]) =>
    events.flatMap((e) => (e.type === "payment" && e.payment.status === "settled" ? [e.payment] : []));

  it("replays a settled approval answered again after the restart, paying nothing more", async () => {
    const wallet = walletAddress(devnet, "evm", "user");
    let { proc, url } = await start();
    const asked = await readChat(
      await post(url, { messages: [{ role: "user", content: WEATHER_PARIS }], walletAddress: wallet }),
    );
    const ask: Awaiting = awaiting(asked);
    const answer = {
      messages: [
        { role: "user", content: WEATHER_PARIS },
        { role: "assistant", content: "Please approve." },
      ],
      walletAddress: wallet,
      approval: { paymentId: ask.paymentId, signature: await signTypedDataOf(ask, user) },
    };
    const before = await evmBalances(devnet, "user");
    const settled = await killAt(proc, await post(url, answer), "settled");
    const killedAt = Date.now();
    expect(settled.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    const paid = await evmBalances(devnet, "user");
    expect(before.payer - paid.payer).toBeGreaterThan(0n);

    ({ proc, url } = await start());
    await leaseLapsed(store, killedAt);
    for (const attempt of [1, 2]) {
      const again = await answered(attempt, await post(url, answer));
      expect(again.headers.get("idempotent-replayed")).toBe("true");
      expect(settledOf(again.events).map((p) => [p.paymentId, p.transaction])).toEqual([
        [ask.paymentId, settled.transaction],
      ]);
      expect(again.finish).toMatchObject({
        finishReason: "payment-complete",
        transactionHash: settled.transaction,
        transactions: [settled.transaction],
      });
    }
    // No second transfer: the balances are as the one payment left them.
    expect(await evmBalances(devnet, "user")).toEqual(paid);
  });

  it("replays a plain request's Idempotency-Key from the ledger after the restart, paying nothing more", async () => {
    const wallet = walletAddress(devnet, "evm", "payer");
    const body = { messages: [{ role: "user", content: WEATHER_PARIS }], walletAddress: wallet };
    const headers = { Authorization: `Bearer ${token}`, "Idempotency-Key": "crash-replay-1" };
    let { proc, url } = await start();
    const before = await evmBalances(devnet);
    const settled = await killAt(proc, await post(url, body, headers), "settled");
    const killedAt = Date.now();
    expect(settled.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    const paid = await evmBalances(devnet);
    expect(before.payer - paid.payer).toBeGreaterThan(0n);

    ({ proc, url } = await start());
    await leaseLapsed(store, killedAt);
    for (const attempt of [1, 2]) {
      const again = await answered(attempt, await post(url, body, headers));
      expect(again.headers.get("idempotent-replayed")).toBe("true");
      expect(settledOf(again.events).map((p) => [p.paymentId, p.transaction])).toEqual([
        [settled.paymentId, settled.transaction],
      ]);
      expect(again.finish).toMatchObject({
        finishReason: "payment-complete",
        transactionHash: settled.transaction,
      });
    }
    expect(await evmBalances(devnet)).toEqual(paid);
  });
});
