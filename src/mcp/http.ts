import { randomUUID } from "node:crypto";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import {
  isInitializeRequest,
  isJSONRPCResultResponse,
  type JSONRPCMessage,
} from "@modelcontextprotocol/sdk/types.js";
import { AppError } from "../errors/index.js";
import type { Payer, PaymentsFace } from "../payments/face.js";
import type { ElicitationAnswers } from "./answers.js";
import { createMcpServer, type McpServerOptions } from "./server.js";

/**
 * MCP over Streamable HTTP, stateless (docs/mcp.md, "Why stateless"): every POST gets a fresh
 * server and transport, so any instance behind a load balancer can answer any request and nothing
 * is kept between requests. What a later request must know travels in the session id the server
 * mints at `initialize`: a random id (the scope the per-request limit counts within) and whether
 * the client declared URL-mode elicitation. A client that forges the flag only changes how its own
 * approvals are offered; the session id grants nothing (the bearer token does).
 */

export const MCP_SESSION_HEADER = "mcp-session-id";
const SESSION_ID = /^mcp_[0-9a-f-]{36}(\.url)?$/;
/** The largest JSON-RPC body read (a tool call's arguments are bounded well below it). */
export const MCP_MAX_BODY_BYTES = 64 * 1024;

export interface McpHttpDeps extends Omit<McpServerOptions, "urlElicitation" | "elicitationAnswers"> {
  face: PaymentsFace;
  /** One per process: elicitation answers handed to the calls of their session waiting here. */
  answers?: ElicitationAnswers;
}

/** A JSON-RPC request (a method and an id), as opposed to a notification or an answer. */
function isRequest(message: unknown): boolean {
  return typeof message === "object" && message !== null && "method" in message && "id" in message;
}

function mintSessionId(message: JSONRPCMessage): string {
  const url = isInitializeRequest(message) && message.params.capabilities.elicitation?.url !== undefined;
  return `mcp_${randomUUID()}${url ? ".url" : ""}`;
}

/** The JSON-RPC body of a POST, bounded (`payload_too_large`) and parsed (`invalid_json`). */
export async function readMcpBody(request: Request): Promise<unknown> {
  const declared = Number(request.headers.get("content-length") ?? "0");
  if (declared > MCP_MAX_BODY_BYTES) {
    throw new AppError("payload_too_large", `An MCP message may be at most ${MCP_MAX_BODY_BYTES} bytes.`);
  }
  const text = await request.text();
  if (Buffer.byteLength(text) > MCP_MAX_BODY_BYTES) {
    throw new AppError("payload_too_large", `An MCP message may be at most ${MCP_MAX_BODY_BYTES} bytes.`);
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new AppError("invalid_json", "The body is not JSON.");
  }
}

/**
 * The MCP session a POST belongs to, which is the scope its payments' per-request limit counts
 * within: minted at `initialize`, else the `Mcp-Session-Id` the client sent back. One JSON-RPC
 * request per POST (the rate limit counts POSTs: a batch of calls in one, which the SDK takes up to
 * 100 of, would count once). Refusals are AppErrors (problem+json at the HTTP layer).
 */
export function mcpSessionOf(body: unknown, sentSessionId: string | undefined): string {
  const messages = (Array.isArray(body) ? body : [body]) as JSONRPCMessage[];
  if (messages.filter(isRequest).length > 1) {
    throw new AppError(
      "invalid_request",
      "Send one JSON-RPC request per POST /mcp (no batches of requests).",
    );
  }
  const init = messages.find((m) => isInitializeRequest(m));
  if (init) return mintSessionId(init);
  if (!SESSION_ID.test(sentSessionId ?? "")) {
    throw new AppError("invalid_request", "Send the Mcp-Session-Id this server gave at initialize.");
  }
  return sentSessionId as string;
}

/**
 * Answer one MCP POST, its body read (`readMcpBody`) and its payer built with the session as its
 * scope (`mcpSessionOf`). Refusals before the MCP layer throw AppError.
 */
export async function handleMcpHttp(
  request: Request,
  body: unknown,
  payer: Payer,
  deps: McpHttpDeps,
): Promise<Response> {
  const messages = (Array.isArray(body) ? body : [body]) as JSONRPCMessage[];
  const init = messages.some((m) => isInitializeRequest(m));
  const sessionId = payer.scopeId;
  const { face, answers, ...options } = deps;
  // Bound to the caller too: another caller knowing the session id cannot end its waits.
  const key = `${payer.caller ?? ""} ${sessionId}`;
  if (answers) {
    for (const message of messages) {
      const action = isJSONRPCResultResponse(message) ? message.result.action : undefined;
      if (typeof action === "string") answers.deliver(key, action);
    }
  }
  const server = createMcpServer(face, payer, {
    ...options,
    signal: request.signal,
    urlElicitation: sessionId.endsWith(".url"),
    ...(answers ? { elicitationAnswers: { listen: (listener) => answers.listen(key, listener) } } : {}),
  });
  const transport = new WebStandardStreamableHTTPServerTransport({
    ...(init ? { sessionIdGenerator: () => sessionId } : {}),
    maxRequestBodySize: MCP_MAX_BODY_BYTES,
  });
  await server.connect(transport);
  return transport.handleRequest(request, { parsedBody: body });
}
