/**
 * Shared set-up for the payment integration suites: one real devnet per test file, the service
 * bootstrapped against it over PGlite (in memory, or a data dir) and, when DATABASE_URL is set,
 * over PostgreSQL in a schema of its own. Helpers read the stream, the ledger and the chains.
 */
import { randomBytes } from "node:crypto";
import { createServer } from "node:http";
import type { LanguageModelV4Prompt, LanguageModelV4StreamPart } from "@ai-sdk/provider";
import { getBase58Decoder } from "@solana/kit";
import { MockLanguageModelV4 } from "ai/test";
import postgres from "postgres";
import type { PrivateKeyAccount } from "viem";
import { bootstrap, type Running } from "../../src/bootstrap.js";
import { loadConfig } from "../../src/config/index.js";
import { type Devnet, startDevnet } from "../../src/devnet/index.js";
import { evmUsdcBalance, solanaUsdcBalance, walletAddress } from "../../src/devnet/testing/index.js";
import { type Logger, silentLogger } from "../../src/log/index.js";
import { createOfflineModel, type ModelRegistry } from "../../src/models/index.js";
import type { Ledger, LedgerReads, PaymentRecord } from "../../src/payments/index.js";
import type { FinishPayload, PaymentUpdate, StreamEvent } from "../../src/protocol/index.js";
import { migratedImage } from "../../src/store/testing/image.js";
import { chatRequest, readEvents, singleModelRegistry } from "../helpers.js";
import { trackServiceIdle } from "../setup/devnet.js";

export { type TestDevnet, useTestDevnet } from "../setup/devnet.js";
export { chatRequest, readEvents };

/** What these helpers read from a devnet (in this process or shared by the test run). */
export type DevnetView = Pick<Devnet, "manifest" | "secrets">;

/** The stores every key suite runs against: PGlite always, PostgreSQL when DATABASE_URL is set. */
export type StoreKind = "pglite" | "postgres";
export const STORES: StoreKind[] = process.env.DATABASE_URL ? ["pglite", "postgres"] : ["pglite"];

export const WEATHER_PARIS = "What's the weather in Paris?";

export async function startTestDevnet(): Promise<Devnet> {
  return startDevnet({ manifestPath: null });
}

/** A schema name unique to one bootstrap, dropped by {@link dropSchema}. */
export function uniqueSchema(prefix: string): string {
  return `t_${prefix}_${randomBytes(4).toString("hex")}`;
}

export interface BootOptions {
  store: StoreKind;
  /** Extra environment (strings, as env vars are). */
  env?: Record<string, string>;
  models?: ModelRegistry;
  /** Postgres schema (store "postgres"); a fresh one when absent. */
  schema?: string;
  /** PGlite data dir (store "pglite"); memory when absent. */
  dataDir?: string;
  /** Where the service logs; silent when absent. */
  logger?: Logger;
}

/**
 * The clock a booted service runs on (BootstrapOptions.now): the system's, until a test moves it
 * (e.g. past an approval window) instead of faking the global `Date`.
 */
export interface TestClock {
  now(): Date;
  /** From now on the clock reads `epochMs` (and runs on from there). */
  jumpTo(epochMs: number): void;
  /** Back to the system's time. */
  reset(): void;
}

export function testClock(): TestClock {
  let offset = 0;
  return {
    now: () => new Date(Date.now() + offset),
    jumpTo: (epochMs) => {
      offset = epochMs - Date.now();
    },
    reset: () => {
      offset = 0;
    },
  };
}

export interface Booted {
  running: Running;
  clock: TestClock;
  schema?: string;
  close(): Promise<void>;
}

/** Bootstrap the whole service against a running devnet. */
export async function boot(devnet: DevnetView, options: BootOptions): Promise<Booted> {
  const schema = options.store === "postgres" ? (options.schema ?? uniqueSchema("pay")) : undefined;
  const env: Record<string, string> = {
    PAYMENTS: "devnet",
    DATA_DIR: options.dataDir ?? "memory://",
    RATE_LIMIT_POINTS: "100000",
    RATE_LIMIT_ANONYMOUS_POINTS: "100000",
    MODEL_PROVIDER: "offline",
    ...(options.store === "postgres" && process.env.DATABASE_URL
      ? { DATABASE_URL: process.env.DATABASE_URL, DATABASE_SCHEMA: schema ?? "" }
      : {}),
    ...options.env,
  };
  const clock = testClock();
  const inMemory = env.DATA_DIR === "memory://" && options.store !== "postgres";
  const running = await bootstrap(loadConfig(env), options.logger ?? silentLogger, {
    devnet,
    devnetManifest: null,
    now: clock.now,
    ...(inMemory ? { storeImage: await migratedImage() } : {}),
    ...(options.models ? { models: options.models } : {}),
  });
  const untrack = trackServiceIdle(() => running.service.lifecycle.idle());
  // Closing twice closes once: with the integration project's shared module cache, a helper
  // module may still hold a service an earlier file closed.
  let closing: Promise<void> | undefined;
  return {
    running,
    clock,
    ...(schema ? { schema } : {}),
    close: () => {
      closing ??= (async () => {
        untrack();
        await running.service.shutdown();
      })();
      return closing;
    },
  };
}

/** Drop a test schema (PostgreSQL only). */
export async function dropSchema(schema: string | undefined): Promise<void> {
  const url = process.env.DATABASE_URL;
  if (!schema || !url) return;
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    await sql.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await sql.end();
  }
}

/** The ledger the payments run on (the store's), with its read side for the tests' checks. */
export function ledgerOf(running: Running): Ledger & LedgerReads {
  const store = running.store;
  if (!running.payments || !store) throw new Error("payments are off");
  return store.ledger;
}

/** A chat, as the client sees it: status, headers, raw text and decoded events. */
export interface ChatResult {
  status: number;
  headers: Headers;
  raw: string;
  events: StreamEvent[];
  payments: PaymentUpdate[];
  errors: Array<{ code: string; message: string; [k: string]: unknown }>;
  finish: FinishPayload;
  requestId: string;
}

export interface ChatOptions {
  wallet?: string;
  token?: string;
  spendingLimits?: Record<string, unknown>;
  headers?: Record<string, string>;
  message?: string;
  body?: Record<string, unknown>;
}

export function chatBody(options: ChatOptions): Record<string, unknown> {
  return (
    options.body ?? {
      messages: [{ role: "user", content: options.message ?? WEATHER_PARIS }],
      ...(options.wallet ? { walletAddress: options.wallet } : {}),
      ...(options.spendingLimits ? { spendingLimits: options.spendingLimits } : {}),
    }
  );
}

export function chatHeaders(options: ChatOptions): Record<string, string> {
  return {
    ...(options.token ? { Authorization: `Bearer ${options.token}` } : {}),
    ...options.headers,
  };
}

/** POST /api/chat in process and read the whole stream. */
export async function chat(running: Running, options: ChatOptions = {}): Promise<ChatResult> {
  const response = await running.service.app.request(
    "/api/chat",
    chatRequest(chatBody(options), chatHeaders(options)),
  );
  return readChat(response);
}

export async function readChat(response: Response): Promise<ChatResult> {
  const raw = await response.text();
  const events = await readEvents(new Response(raw));
  const finishes = events.flatMap((e) => (e.type === "finish" ? [e.finish] : []));
  const finish = finishes.at(-1);
  if (!finish) throw new Error(`no d: line (HTTP ${response.status}): ${raw.slice(0, 500)}`);
  if (finishes.length !== 1 || events.at(-1)?.type !== "finish")
    throw new Error("d: must be the one last line");
  return {
    status: response.status,
    headers: response.headers,
    raw,
    events,
    payments: events.flatMap((e) => (e.type === "payment" ? [e.payment] : [])),
    errors: events.flatMap((e) => (e.type === "error" ? [e.error] : [])),
    finish,
    requestId: response.headers.get("x-request-id") ?? "",
  };
}

/** The ledger rows of one chat request. */
export async function rowsOf(running: Running, result: ChatResult): Promise<PaymentRecord[]> {
  return ledgerOf(running).listByScope(result.requestId);
}

export interface Balances {
  payer: bigint;
  merchant: bigint;
}

export async function evmBalances(devnet: DevnetView, payer = "payer"): Promise<Balances> {
  const [p, m] = await Promise.all([
    evmUsdcBalance(devnet, walletAddress(devnet, "evm", payer)),
    evmUsdcBalance(devnet, walletAddress(devnet, "evm", "merchant")),
  ]);
  return { payer: p, merchant: m };
}

export async function solanaBalances(devnet: DevnetView, payer = "payer"): Promise<Balances> {
  const [p, m] = await Promise.all([
    solanaUsdcBalance(devnet, walletAddress(devnet, "solana", payer)),
    solanaUsdcBalance(devnet, walletAddress(devnet, "solana", "merchant")),
  ]);
  return { payer: p, merchant: m };
}

export function priceOf(devnet: DevnetView, id: string): bigint {
  const service = devnet.manifest.services.find((s) => s.id === id);
  if (!service) throw new Error(`no service ${id}`);
  return BigInt(service.priceAtomic);
}

export function serviceUrl(devnet: DevnetView, id: string): string {
  const service = devnet.manifest.services.find((s) => s.id === id);
  if (!service) throw new Error(`no service ${id}`);
  return service.url;
}

/** Poll `check` every few ms until it returns a value, or fail after `timeoutMs`. */
export async function poll<T>(
  check: () => Promise<T | undefined>,
  timeoutMs = 10_000,
  what = "condition",
): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Every secret a stream must never show: wallet keys (hex and base58/bytes) and the dev token. */
export function secretStrings(devnet: DevnetView): string[] {
  const out: string[] = [devnet.manifest.devToken];
  for (const key of Object.values(devnet.secrets.evm)) out.push(key, key.slice(2));
  for (const key of Object.values(devnet.secrets.solana)) {
    out.push(
      Buffer.from(key).toString("hex"),
      Buffer.from(key).toString("base64"),
      getBase58Decoder().decode(key),
      getBase58Decoder().decode(key.slice(0, 32)),
      key.join(","),
    );
  }
  return out;
}

/** One tool call a scripted model makes. */
export interface ScriptedCall {
  toolName: string;
  input: Record<string, unknown>;
}

const USAGE = {
  inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 5, text: 5, reasoning: 0 },
};

function lastUserText(prompt: LanguageModelV4Prompt): string {
  const user = prompt.filter((m) => m.role === "user").at(-1);
  if (!user) return "";
  return user.content.map((part) => (part.type === "text" ? part.text : "")).join("");
}

/**
 * A model that obeys every instruction it is given. A user message `script:<name>` runs the script
 * of that name: step i makes the tool calls of `steps[i]` (several calls in one step run together),
 * then it says "done". The step is read from the prompt (how many tool-result messages it holds),
 * so concurrent requests are independent. Any other message goes to the built-in offline model.
 */
export class ScriptedModels {
  private readonly scripts = new Map<string, ScriptedCall[][]>();
  /** How many steps of each script the model was asked for (the furthest any request got). */
  readonly steps = new Map<string, number>();
  private readonly offline = createOfflineModel();
  readonly model = new MockLanguageModelV4({
    modelId: "scripted",
    doStream: async (options) => {
      const text = lastUserText(options.prompt);
      const name = text.startsWith("script:") ? text.slice("script:".length) : undefined;
      if (name === undefined) return this.offline.doStream(options);
      const steps = this.scripts.get(name);
      if (!steps) throw new Error(`no script ${name}`);
      const step = options.prompt.filter((m) => m.role === "tool").length;
      this.steps.set(name, Math.max(this.steps.get(name) ?? 0, step + 1));
      return { stream: scriptStream(steps[step] ?? [], step) };
    },
  });
  readonly registry: ModelRegistry = singleModelRegistry(this.model, "mock");

  /** Register a script; returns the user message that runs it. */
  script(name: string, steps: ScriptedCall[][]): string {
    this.scripts.set(name, steps);
    return `script:${name}`;
  }
}

function scriptStream(calls: ScriptedCall[], step: number): ReadableStream<LanguageModelV4StreamPart> {
  const parts: LanguageModelV4StreamPart[] = [{ type: "stream-start", warnings: [] }];
  if (calls.length > 0) {
    for (const [i, c] of calls.entries()) {
      parts.push({
        type: "tool-call",
        toolCallId: `call-${step}-${i}`,
        toolName: c.toolName,
        input: JSON.stringify(c.input),
      });
    }
    parts.push({ type: "finish", finishReason: { unified: "tool-calls", raw: "tool_calls" }, usage: USAGE });
  } else {
    parts.push(
      { type: "text-start", id: "t" },
      { type: "text-delta", id: "t", delta: "done" },
      { type: "text-end", id: "t" },
      { type: "finish", finishReason: { unified: "stop", raw: "stop" }, usage: USAGE },
    );
  }
  return new ReadableStream<LanguageModelV4StreamPart>({
    start(controller) {
      for (const part of parts) controller.enqueue(part);
      controller.close();
    },
  });
}

/** pay_and_fetch for the weather in Paris (or another service), as a model would ask for it. */
export function payCall(
  devnet: DevnetView,
  id = "weather",
  extra: Record<string, unknown> = {},
): ScriptedCall {
  const query: Record<string, string> =
    id === "weather" ? { city: "Paris" } : id === "premium-report" ? { topic: "AI" } : { topic: "x" };
  return {
    toolName: "pay_and_fetch",
    input: { url: serviceUrl(devnet, id), method: "GET", query, ...extra },
  };
}

/** A `p:` update that asks the user's wallet to approve. */
export type Awaiting = PaymentUpdate & { approval: NonNullable<PaymentUpdate["approval"]> };

/** The payment of a turn that stopped for approval; throws (with the stream) when none did. */
export function awaiting(result: ChatResult): Awaiting {
  const update = result.payments.find((p) => p.status === "awaiting_approval");
  if (!update?.approval) throw new Error(`no approval asked: ${result.raw.slice(0, 800)}`);
  return update as Awaiting;
}

/**
 * What a wallet does with `eth_signTypedData_v4`'s input (viem hashes it with bigints); `tamper`
 * changes the message first, to sign terms other than the stored ones.
 */
export async function signTypedDataOf(
  request: Awaiting,
  account: PrivateKeyAccount,
  tamper?: (message: Record<string, unknown>) => void,
): Promise<`0x${string}`> {
  const sign = request.approval.sign;
  if (sign.kind !== "evm-typed-data") throw new Error("not an EVM approval");
  const { EIP712Domain: _domain, ...types } = sign.typedData.types;
  const message = { ...sign.typedData.message };
  tamper?.(message);
  return account.signTypedData({
    domain: { ...sign.typedData.domain, chainId: Number(sign.typedData.domain.chainId) },
    types,
    primaryType: sign.typedData.primaryType,
    message: {
      ...message,
      value: BigInt(String(message.value)),
      validAfter: BigInt(String(message.validAfter)),
      validBefore: BigInt(String(message.validBefore)),
    },
  } as Parameters<PrivateKeyAccount["signTypedData"]>[0]);
}

/** A refusal's status and problem+json body (or the raw text when it is not JSON). */
export async function problem(
  response: Response,
): Promise<{ status: number; code?: string; [k: string]: unknown }> {
  const text = await response.text();
  try {
    return { status: response.status, ...(JSON.parse(text) as { code: string }) };
  } catch {
    return { status: response.status, raw: text.slice(0, 300) };
  }
}

/** What a loopback sidecar is asked: the request's method, path and whole body. */
export interface SidecarRequest {
  method: string;
  url: string;
  body: string;
}

/**
 * A loopback HTTP server standing for a service the test points the service at (an OTLP
 * receiver, an identity provider's key set): each request is read whole, then answered 200 with
 * `answer`'s JSON (`{}` when it gives nothing).
 */
export async function sidecarServer(
  answer: (request: SidecarRequest) => unknown,
): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      const reply = answer({ method: req.method ?? "GET", url: req.url ?? "/", body }) ?? {};
      res.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify(reply));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (!address || typeof address === "string") throw new Error("no address");
  return {
    url: `http://127.0.0.1:${address.port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
