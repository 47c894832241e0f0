/**
 * The MCP server (docs/mcp.md): six tools on the payments face, for one session whose wallet and
 * limits come from the caller's configuration; served over Streamable HTTP at `/mcp` (`http.ts`,
 * stateless) and reached from stdio clients through the `x402-chat-agent mcp` bridge (src/cli).
 * It imports payments only through their face (src/payments/face.ts) and knows nothing of Hono.
 */
export { ElicitationAnswers, RunningCalls } from "./answers.js";
export { describeApproval } from "./approval.js";
export {
  handleMcpHttp,
  MCP_MAX_BODY_BYTES,
  MCP_SESSION_HEADER,
  type McpEra,
  type McpHttpDeps,
  mcpCountsAgainstQuota,
  mcpEraOf,
  mcpSessionOf,
  parseMcpBody,
} from "./http.js";
export { createMcpServer, type McpServerOptions, SERVER_VERSION } from "./server.js";
export { MCP_TOOLS, type McpToolName } from "./tools.js";
