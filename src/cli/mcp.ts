import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  type JSONRPCMessage,
} from "@modelcontextprotocol/sdk/types.js";
import { devnetIdentity } from "./devnet.js";
import { UsageError } from "./errors.js";
import { EXIT } from "./exit.js";
import { BROKE_OFF, renewingToken, watchStreams, withRevisionHeaders } from "./mcp-fetch.js";
import { answerUnreadable } from "./mcp-lines.js";

/**
 * `x402-chat-agent mcp`: a stdio <-> Streamable HTTP bridge to the running service's `/mcp`
 * (docs/mcp.md, "stdio"). Desktop MCP clients start it as a command; it forwards every message
 * as it is, both ways (so elicitation passes through), adding the bearer token and the session's
 * wallet and limits as headers. It holds no wallet, no ledger and no limits of its own: one
 * service keeps them, and a second process on the embedded PGlite data dir would corrupt it.
 * stdout carries only the protocol; anything for a person goes to stderr.
 */

export const MCP_USAGE = `x402-chat-agent mcp: an MCP server on stdio, bridged to a running service's /mcp

Options (each also from the environment):
  --url URL               the service ($X402_CHAT_URL, else the devnet manifest's chatUrl,
                          else http://127.0.0.1:3000); /mcp is added
  --token TOKEN           bearer token ($X402_CHAT_TOKEN)
  --wallet ADDRESS        the wallet that pays ($X402_CHAT_WALLET)
  --limits JSON           spending limits as the chat's spendingLimits JSON ($X402_CHAT_LIMITS),
                          e.g. '{"perTransaction":"0.10","daily":"1"}'
  --devnet[=ROLE]         URL, token and wallet from the embedded devnet's manifest (payer, user...)
  --tab TOKEN             a tab's token: pay_quote pays from that tab, no approval ($X402_CHAT_TAB)
`;

export interface BridgeOptions {
  /** The service's /mcp endpoint. */
  endpoint: URL;
  headers: Record<string, string>;
  /**
   * With `--devnet` and no `--token`: the devnet manifest's dev token read again. The embedded
   * devnet makes a new one on every start, so after the service restarts a 401 is retried once
   * with the token it now has (the desktop client need not be restarted).
   */
  renewToken?: () => string | undefined;
}

function manifestUrl(env: NodeJS.ProcessEnv): string | undefined {
  try {
    const path = env.DEVNET_MANIFEST ?? ".data/devnet/manifest.json";
    const manifest = JSON.parse(readFileSync(path, "utf8")) as { chatUrl?: unknown };
    return typeof manifest.chatUrl === "string" ? manifest.chatUrl : undefined;
  } catch {
    return undefined;
  }
}

/** Flags and environment -> where to connect and the headers every request carries. */
export function parseMcpArgs(argv: string[], env: NodeJS.ProcessEnv): BridgeOptions | "help" {
  const { values, positionals } = parseArgs({
    // `--devnet` alone is the payer, as for `chat`.
    args: argv.map((arg) => (arg === "--devnet" ? "--devnet=" : arg)),
    allowPositionals: true,
    options: {
      url: { type: "string" },
      token: { type: "string" },
      wallet: { type: "string" },
      limits: { type: "string" },
      tab: { type: "string" },
      devnet: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) return "help";
  if (positionals.length > 0) throw new UsageError(`mcp takes no words (${positionals.join(" ")})`);
  let token = values.token ?? env.X402_CHAT_TOKEN;
  let wallet = values.wallet ?? env.X402_CHAT_WALLET;
  let url = values.url ?? env.X402_CHAT_URL;
  let renewToken: BridgeOptions["renewToken"];
  if (values.devnet !== undefined) {
    const role = values.devnet === "" ? "payer" : values.devnet;
    const identity = devnetIdentity(role, env);
    if (role !== "user") token = values.token ?? identity.token;
    if (role !== "user" && values.token === undefined) {
      renewToken = () => {
        try {
          return devnetIdentity(role, env).token;
        } catch {
          return undefined; // no manifest now (the service is down): the 401 stands
        }
      };
    }
    wallet = values.wallet ?? identity.wallet;
    url = values.url ?? identity.url ?? url;
  }
  url ??= manifestUrl(env) ?? "http://127.0.0.1:3000";
  let endpoint: URL;
  try {
    endpoint = new URL("mcp", url.endsWith("/") ? url : `${url}/`);
  } catch {
    throw new UsageError(`--url ${url}: not a URL`);
  }
  const limits = values.limits ?? env.X402_CHAT_LIMITS;
  if (limits !== undefined) {
    try {
      JSON.parse(limits);
    } catch {
      throw new UsageError('--limits must be JSON, e.g. \'{"daily":"1"}\'');
    }
  }
  const headers: Record<string, string> = {};
  if (token) headers.Authorization = `Bearer ${token}`;
  if (wallet) headers["X-Wallet-Address"] = wallet;
  if (limits !== undefined) headers["X-Spending-Limits"] = limits;
  const tab = values.tab ?? env.X402_CHAT_TAB;
  if (tab) headers["X-Tab-Token"] = tab;
  return { endpoint, headers, ...(renewToken ? { renewToken } : {}) };
}

/**
 * Why a message did not reach the service, in words a person can act on: a connection that failed
 * (fetch's bare "fetch failed") names the URL and what to do; the service's own refusals keep
 * their text (status and problem).
 */
export function describeSendError(error: unknown, endpoint: URL): string {
  const text = error instanceof Error ? error.message : String(error);
  if (!(error instanceof TypeError) && !/fetch failed/i.test(text)) return text;
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause : undefined;
  const code = (cause as { code?: unknown } | undefined)?.code;
  const why = typeof code === "string" ? code : (cause?.message ?? text);
  return `cannot reach the service at ${endpoint.href} (${why}). Start it (npm start in its checkout), or point the bridge at a running one with --url or $X402_CHAT_URL.`;
}

/** A request the service could not take: the client gets a JSON-RPC error for it, not silence. */
function failed(message: JSONRPCMessage, text: string): JSONRPCMessage | undefined {
  if (!isJSONRPCRequest(message)) return undefined;
  return { jsonrpc: "2.0", id: message.id, error: { code: -32603, message: text.slice(0, 2000) } };
}

export interface BridgeIo {
  stdin: NodeJS.ReadableStream;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  fetch?: FetchLike;
}

/**
 * What the stdio transport could not read: said on stderr, and a line that is not one JSON-RPC
 * message (bad JSON, a batch, null) is answered as JSON-RPC says, with id null, so a client is not
 * left waiting on stdout. (One with a readable id was answered with it before: mcp-lines.ts.)
 */
function refusedLine(stdout: NodeJS.WritableStream, say: (text: string) => void) {
  return (error: Error) => {
    // A schema's refusal is a page of union branches: one line says it.
    say(error.name === "ZodError" ? "refused a line that is not one JSON-RPC message" : error.message);
    if (error instanceof SyntaxError || error.name === "ZodError") {
      const code = error instanceof SyntaxError ? -32700 : -32600;
      const text =
        code === -32700 ? "Parse error: not JSON" : "Invalid Request: one JSON-RPC message per line";
      stdout.write(`${JSON.stringify({ jsonrpc: "2.0", id: null, error: { code, message: text } })}\n`);
    }
  };
}

/** Forward messages both ways until stdin ends; resolves then. */
export async function runBridge(options: BridgeOptions, io: BridgeIo): Promise<void> {
  // A line the SDK would refuse with `id: null` though its id is readable is answered with it.
  const lines = io.stdin.pipe(answerUnreadable((line) => io.stdout.write(line)));
  const local = new StdioServerTransport(
    lines as unknown as NodeJS.ReadStream,
    io.stdout as NodeJS.WriteStream,
  );
  // The SDK reports a failed send both to onerror and to the send's caller: said once.
  let lastSaid = "";
  const say = (text: string) => {
    if (text !== lastSaid) io.stderr.write(`x402-chat-agent mcp: ${text}\n`);
    lastSaid = text;
  };
  // Requests sent on and not yet answered; one whose answer stream broke off gets an error.
  const pending = new Map<string | number, JSONRPCMessage>();
  const unanswered = (id: string | number) => {
    const message = pending.get(id);
    if (!message || !pending.delete(id)) return;
    if (initializeIds.has(id)) open(id); // what waits on it goes on, to be refused as it will
    say(BROKE_OFF);
    const answer = failed(message, BROKE_OFF);
    if (answer) local.send(answer).catch(() => {});
  };
  const base: FetchLike = io.fetch ?? ((url, init) => fetch(url, init));
  const fetcher = withRevisionHeaders(options.renewToken ? renewingToken(base, options.renewToken) : base);
  const remote = new StreamableHTTPClientTransport(options.endpoint, {
    requestInit: { headers: options.headers },
    fetch: watchStreams(fetcher, unanswered),
  });
  const initializeIds = new Set<string | number>();
  const done = new Promise<void>((resolve) => {
    local.onclose = resolve;
    io.stdin.once("end", resolve);
    io.stdin.once("close", resolve);
  });
  local.onerror = refusedLine(io.stdout, say);
  remote.onerror = (error) => say(describeSendError(error, options.endpoint));
  // While an initialize is answered, what a client sends after it waits (it needs the session the
  // answer opens), then goes in the order sent. Each initialize opens its own gate.
  let initialized: Promise<void> = Promise.resolve();
  const gates = new Map<string | number, () => void>();
  const open = (id: string | number) => {
    initializeIds.delete(id);
    gates.get(id)?.();
    gates.delete(id);
  };
  remote.onmessage = (message) => {
    const answerTo = "id" in message && !("method" in message) ? (message.id as string | number) : undefined;
    if (answerTo !== undefined) pending.delete(answerTo);
    if (answerTo !== undefined && initializeIds.has(answerTo)) {
      // The protocol version the service agreed to goes on every later request (the spec's header).
      const version = isJSONRPCResultResponse(message)
        ? (message.result as { protocolVersion?: unknown }).protocolVersion
        : undefined;
      if (typeof version === "string") remote.setProtocolVersion(version);
      open(answerTo);
    }
    local.send(message).catch((error: unknown) => local.onerror?.(error as Error));
  };
  const forward = (message: JSONRPCMessage) => {
    if (isJSONRPCRequest(message)) pending.set(message.id, message);
    remote.send(message).catch((error: unknown) => {
      if (isJSONRPCRequest(message)) pending.delete(message.id);
      if (isJSONRPCRequest(message) && initializeIds.has(message.id)) open(message.id);
      const text = describeSendError(error, options.endpoint);
      say(text);
      const answer = failed(message, text);
      if (answer) local.send(answer).catch(() => {});
    });
  };
  local.onmessage = (message) => {
    const before = initialized;
    if (isJSONRPCRequest(message) && message.method === "initialize") {
      const { id } = message;
      gates.get(id)?.(); // the same id twice: the earlier gate is not left shut
      initialized = new Promise((resolve) => gates.set(id, resolve));
      void before.then(() => {
        initializeIds.add(id);
        forward(message);
      });
      return;
    }
    void before.then(() => forward(message));
  };
  await remote.start();
  await local.start();
  await done;
  await remote.close().catch(() => {});
}

/** `x402-chat-agent mcp [options]`: resolves to the exit code. */
export async function mcpMain(argv: string[], io: BridgeIo & { env: NodeJS.ProcessEnv }): Promise<number> {
  let options: BridgeOptions | "help";
  try {
    options = parseMcpArgs(argv, io.env);
  } catch (error) {
    io.stderr.write(
      `x402-chat-agent mcp: ${error instanceof Error ? error.message : String(error)}\n\n${MCP_USAGE}`,
    );
    return EXIT.usage;
  }
  if (options === "help") {
    io.stderr.write(MCP_USAGE);
    return EXIT.ok;
  }
  await runBridge(options, io);
  return EXIT.ok;
}
