import { randomUUID } from "node:crypto";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import {
  isInitializeRequest,
  isJSONRPCResultResponse,
  type JSONRPCMessage,
} from "@modelcontextprotocol/sdk/types.js";
import { AppError } from "../errors/index.js";
import type { PaymentsFace } from "../payments/face.js";
import type { ElicitationAnswers } from "./answers.js";
import { createMcpServer, type McpServerOptions, type McpSession } from "./server.js";

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

/** The session's fixed part, from the caller (bearer identity) and its configuration (headers). */
export type McpCaller = Omit<McpSession, "scopeId" | "signal">;

/** A JSON-RPC request (a method and an id), as opposed to a notification or an answer. */
function isRequest(message: unknown): boolean {
  return typeof message === "object" && message !== null && "method" in message && "id" in message;
}

function mintSessionId(message: JSONRPCMessage): string {
  const url = isInitializeRequest(message) && message.params.capabilities.elicitation?.url !== undefined;
  return `mcp_${randomUUID()}${url ? ".url" : ""}`;
}

async function readBody(request: Request): Promise<unknown> {
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
 * Answer one MCP request. GET (a standalone event stream) and DELETE have nothing to serve in a
 * stateless server: 405, which the MCP clients accept. Refusals before the MCP layer throw AppError
 * (problem+json at the HTTP layer).
 */
export async function handleMcpHttp(
  request: Request,
  caller: McpCaller,
  deps: McpHttpDeps,
): Promise<Response> {
  if (request.method !== "POST") {
    throw new AppError("method_not_allowed", "This MCP server is stateless: use POST /mcp.");
  }
  const body = await readBody(request);
  const messages = (Array.isArray(body) ? body : [body]) as JSONRPCMessage[];
  // The rate limit counts POSTs: a batch of calls in one (the SDK takes up to 100) would count once.
  if (messages.filter(isRequest).length > 1) {
    throw new AppError(
      "invalid_request",
      "Send one JSON-RPC request per POST /mcp (no batches of requests).",
    );
  }
  const init = messages.find((m) => isInitializeRequest(m));
  let sessionId: string;
  if (init) {
    sessionId = mintSessionId(init);
  } else {
    const sent = request.headers.get(MCP_SESSION_HEADER) ?? "";
    if (!SESSION_ID.test(sent)) {
      throw new AppError("invalid_request", "Send the Mcp-Session-Id this server gave at initialize.");
    }
    sessionId = sent;
  }
  const { face, answers, ...options } = deps;
  // Bound to the caller too: another caller knowing the session id cannot end its waits.
  const key = `${caller.caller ?? ""} ${sessionId}`;
  if (answers) {
    for (const message of messages) {
      const action = isJSONRPCResultResponse(message) ? message.result.action : undefined;
      if (typeof action === "string") answers.deliver(key, action);
    }
  }
  const server = createMcpServer(
    face,
    { ...caller, scopeId: sessionId, signal: request.signal },
    {
      ...options,
      urlElicitation: sessionId.endsWith(".url"),
      ...(answers ? { elicitationAnswers: { listen: (listener) => answers.listen(key, listener) } } : {}),
    },
  );
  const transport = new WebStandardStreamableHTTPServerTransport({
    ...(init ? { sessionIdGenerator: () => sessionId } : {}),
    maxRequestBodySize: MCP_MAX_BODY_BYTES,
  });
  await server.connect(transport);
  return transport.handleRequest(request, { parsedBody: body });
}
