import { randomUUID } from "node:crypto";
import {
  createMcpHandler,
  isInitializeRequest,
  isJSONRPCResultResponse,
  isLegacyRequest,
  type JSONRPCMessage,
  WebStandardStreamableHTTPServerTransport,
} from "@modelcontextprotocol/server";
import { AppError } from "../errors/index.js";
import type { Payer, PaymentsFace } from "../payments/face.js";
import { parseJsonAmountsAsWritten } from "../protocol/index.js";
import type { ElicitationAnswers, RunningCalls } from "./answers.js";
import { createMcpServer, type McpServerOptions } from "./server.js";

/**
 * MCP over Streamable HTTP, stateless (docs/mcp.md, "Why stateless"): every POST gets a fresh
 * server and transport, so any instance behind a load balancer can answer any request and nothing
 * is kept between requests. Two revisions, told apart by the SDK's own classification
 * (`isLegacyRequest`): 2026-07-28 requests carry their protocol version, client and capabilities
 * in `_meta` and are served by the SDK's per-request handler; 2025-11-25 ones by a transport whose
 * session id, minted at `initialize`, carries what a later request must know: a random id (the
 * scope the per-request limit counts within) and whether the client declared URL-mode elicitation.
 * A client that forges the flag only changes how its own approvals are offered; the session id
 * grants nothing (the bearer token does).
 */

export const MCP_SESSION_HEADER = "mcp-session-id";
const SESSION_ID = /^mcp_[0-9a-f-]{36}(\.url)?$/;
/** The largest JSON-RPC body read (a tool call's arguments are bounded well below it). */
export const MCP_MAX_BODY_BYTES = 64 * 1024;

export type McpEra = "legacy" | "modern";

export interface McpHttpDeps
  extends Omit<McpServerOptions, "urlElicitation" | "elicitationAnswers" | "era" | "notify"> {
  face: PaymentsFace;
  /** One per process: elicitation answers handed to the calls of their session waiting here. */
  answers?: ElicitationAnswers;
  /** One per process: the calls running here, so a later POST's cancellation reaches them. */
  calls?: RunningCalls;
}

/** A JSON-RPC request (a method and an id), as opposed to a notification or an answer. */
function isRequest(message: unknown): boolean {
  return typeof message === "object" && message !== null && "method" in message && "id" in message;
}

/**
 * Requests that cost the service next to nothing: the handshake (`initialize`, 2026-07-28's
 * `server/discover`), the static tool list and `ping`. No model, store, chain or outbound call.
 */
const FREE_METHODS = new Set(["initialize", "server/discover", "tools/list", "ping"]);

/**
 * Whether a POST counts against the caller's rate limit (docs/mcp.md#session): only when it
 * carries a request that does work (a tool call, or any method not in {@link FREE_METHODS}).
 * Notifications and answers to elicitations cost no quota, nor does the handshake: answering them
 * costs no more than a 429 would, and a session's start no longer eats an agent's tool calls.
 */
export function mcpCountsAgainstQuota(body: unknown): boolean {
  const messages = Array.isArray(body) ? body : [body];
  return messages.some((m) => isRequest(m) && !FREE_METHODS.has(String((m as { method: unknown }).method)));
}

function mintSessionId(message: JSONRPCMessage): string {
  const url = isInitializeRequest(message) && message.params.capabilities.elicitation?.url !== undefined;
  return `mcp_${randomUUID()}${url ? ".url" : ""}`;
}

/**
 * The JSON-RPC body of a POST, from its text (read by the HTTP layer, at most MCP_MAX_BODY_BYTES):
 * parsed (`invalid_json`), an amount sent as a number kept as written (`parseJsonAmountsAsWritten`).
 */
export function parseMcpBody(text: string): unknown {
  try {
    return parseJsonAmountsAsWritten(text);
  } catch (error) {
    // The reviver walks the value by recursion: thousands of levels overflow the stack.
    const deep = error instanceof RangeError ? ": it is nested too deeply" : "";
    throw new AppError("invalid_json", `The body is not JSON${deep}.`);
  }
}

/** The revision a POST speaks, as the SDK routes it (`isLegacyRequest`: 2025-era or 2026-07-28). */
export async function mcpEraOf(request: Request, body: unknown): Promise<McpEra> {
  return (await isLegacyRequest(request, body, { maxRequestBodySize: MCP_MAX_BODY_BYTES }))
    ? "legacy"
    : "modern";
}

/**
 * The scope a POST's payments' per-request limit counts within. On 2025-11-25, the MCP session:
 * minted at `initialize`, else the `Mcp-Session-Id` the client sent back. On 2026-07-28 there is no
 * session and no conversation id: each request is its own scope (docs/mcp.md, "Session"). One
 * JSON-RPC request per POST (the rate limit counts POSTs: a batch of calls in one, which the SDK
 * takes up to 100 of, would count once). Refusals are AppErrors (problem+json at the HTTP layer).
 */
export function mcpSessionOf(
  body: unknown,
  sentSessionId: string | undefined,
  era: McpEra = "legacy",
): string {
  const messages = (Array.isArray(body) ? body : [body]) as JSONRPCMessage[];
  if (messages.length === 0)
    throw new AppError("invalid_request", "An empty batch holds no JSON-RPC message.");
  if (messages.filter(isRequest).length > 1) {
    throw new AppError(
      "invalid_request",
      "Send one JSON-RPC request per POST /mcp (no batches of requests).",
    );
  }
  if (era === "modern") return `mcp_${randomUUID()}`;
  const init = messages.find((m) => isInitializeRequest(m));
  if (init) return mintSessionId(init);
  // An `initialize` the SDK's schema refuses (no params, capabilities null) is not a request
  // without a session: say what is wrong with it.
  if (messages.some((m) => (m as { method?: unknown })?.method === "initialize")) {
    throw new AppError(
      "invalid_request",
      "This initialize is malformed: it needs params with protocolVersion, capabilities (an object) and clientInfo.",
    );
  }
  if (!SESSION_ID.test(sentSessionId ?? "")) {
    throw new AppError("invalid_request", "Send the Mcp-Session-Id this server gave at initialize.");
  }
  return sentSessionId as string;
}

/**
 * Answer one MCP POST, its body read (`readMcpBody`), its revision known (`mcpEraOf`) and its
 * payer built with its scope (`mcpSessionOf`). Refusals before the MCP layer throw AppError.
 */
export async function handleMcpHttp(
  request: Request,
  body: unknown,
  payer: Payer,
  deps: McpHttpDeps,
  era: McpEra = "legacy",
): Promise<Response> {
  if (era === "modern") {
    const { face, answers: _answers, calls: _calls, ...options } = deps;
    const handler = createMcpHandler(
      () => createMcpServer(face, payer, { ...options, signal: request.signal, era: "modern" }),
      // A request the SDK refuses (headers, envelope, a bad requestState) is the client's answer,
      // not the operator's log; a tool's own errors still reach `onError`.
      { legacy: "reject", maxRequestBodySize: MCP_MAX_BODY_BYTES },
    );
    return handler.fetch(request, { parsedBody: body });
  }
  const messages = (Array.isArray(body) ? body : [body]) as JSONRPCMessage[];
  const init = messages.some((m) => isInitializeRequest(m));
  const sessionId = payer.scopeId;
  const { face, answers, calls, ...options } = deps;
  // Bound to the caller too: another caller knowing the session id cannot end its waits.
  const key = `${payer.caller ?? ""} ${sessionId}`;
  if (answers) {
    for (const message of messages) {
      const action = isJSONRPCResultResponse(message) ? message.result.action : undefined;
      if (typeof action === "string") answers.deliver(key, action);
    }
  }
  const running = calls && trackCall(calls, key, messages, deps.callTimeoutMs);
  const signal = running ? AbortSignal.any([request.signal, running.signal]) : request.signal;
  const transport = new WebStandardStreamableHTTPServerTransport({
    ...(init ? { sessionIdGenerator: () => sessionId } : {}),
    maxRequestBodySize: MCP_MAX_BODY_BYTES,
  });
  const server = createMcpServer(face, payer, {
    ...options,
    signal,
    ...(running ? { keep: (work) => running.keep(work, options.keep) } : {}),
    urlElicitation: sessionId.endsWith(".url"),
    // This instance never saw `initialize`; the session id says the client declared URL elicitation.
    notify: (notification, relatedRequestId) =>
      transport.send({ jsonrpc: "2.0", ...notification }, { relatedRequestId }),
    ...(answers ? { elicitationAnswers: { listen: (listener) => answers.listen(key, listener) } } : {}),
  });
  await server.connect(transport);
  return transport.handleRequest(request, { parsedBody: body });
}

/**
 * The POST's cancellations, applied, and its call (at most one request a POST), tracked until its
 * work ends (or its time is up) so that a later cancellation reaches it.
 */
function trackCall(calls: RunningCalls, session: string, messages: JSONRPCMessage[], timeoutMs: number) {
  const keyOf = (id: unknown) => `${session} ${JSON.stringify(id)}`;
  for (const message of messages) {
    const m = message as { method?: unknown; params?: { requestId?: unknown } };
    if (m.method === "notifications/cancelled" && m.params?.requestId !== undefined)
      calls.cancel(keyOf(m.params.requestId));
  }
  // Only a tool call runs long enough to cancel; its work reaches `keep`, which forgets it.
  const call = messages.find((m) => isRequest(m) && (m as { method?: unknown }).method === "tools/call") as
    | { id?: unknown }
    | undefined;
  if (!call) return undefined;
  const { signal, done } = calls.start(keyOf(call.id));
  const bound = setTimeout(done, timeoutMs);
  bound.unref();
  return {
    signal,
    /** The call's work: forgotten once it ends, and still handed to the service's own `keep`. */
    keep(work: Promise<unknown>, keep?: (work: Promise<unknown>) => void) {
      keep?.(work);
      const end = () => {
        clearTimeout(bound);
        done();
      };
      work.then(end, end);
    },
  };
}
