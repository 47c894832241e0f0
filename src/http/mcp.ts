import { createHmac } from "node:crypto";
import type { Hono } from "hono";
import { parseWallet } from "../chains/index.js";
import { AppError } from "../errors/index.js";
import type { Logger } from "../log/index.js";
import {
  ElicitationAnswers,
  handleMcpHttp,
  MCP_MAX_BODY_BYTES,
  MCP_SESSION_HEADER,
  type McpEra,
  type McpServerOptions,
  mcpCountsAgainstQuota,
  mcpEraOf,
  mcpSessionOf,
  parseMcpBody,
  RunningCalls,
} from "../mcp/index.js";
import type { PaymentsFace } from "../payments/face.js";
import { parseJsonAmountsAsWritten, parsePayerConfig, parseTabToken } from "../protocol/index.js";
import { readBodyText, requireJson } from "./body.js";
import { nodeRequest } from "./chat-request.js";
import type { Lifecycle } from "./lifecycle.js";
import { payer } from "./payer.js";
import { problemResponse } from "./problem.js";
import { type RateLimitDeps, rateLimitPayer } from "./rate-limit.js";
import type { AuthVars, Middleware, PayerConfigVars, PayerVars } from "./vars.js";

/** The MCP POST's JSON-RPC body and the session it belongs to (readMcpMessage). */
interface McpMessageVars {
  mcpBody: unknown;
  mcpSessionId: string;
  mcpEra: McpEra;
}

/** The headers an MCP client's configuration sets (docs/mcp.md, "Session"). */
export const WALLET_HEADER = "x-wallet-address";
export const LIMITS_HEADER = "x-spending-limits";
/** A tab's token: the session's payments are paid from that tab (docs/mcp.md). */
export const TAB_HEADER = "x-tab-token";

export interface McpRouteDeps {
  face: PaymentsFace;
  /** This service's approval page for a payment: `${PUBLIC_URL}/approve/<paymentId>`. */
  approvalUrl: (paymentId: string) => string;
  /** Tabs that serve their caller (`open_tab`, `close_tab`); absent: no such tools. */
  tabs?: McpServerOptions["tabs"];
  auth: Middleware<AuthVars>;
  quota: RateLimitDeps;
  requestTimeoutMs: number;
  logger: Logger;
  /** Pages that may call it (CORS_ORIGINS), besides those on a loopback host. */
  origins: readonly string[];
  /** A shutdown waits for the MCP calls under way, as for chat turns. */
  lifecycle: Pick<Lifecycle, "keep">;
  /** QUOTE_SECRET: 2026-07-28 request states hold on every instance that shares it (else per process). */
  stateSecret?: string;
  now?: () => Date;
}

/**
 * The wallet and spending limits of an MCP session, from its request headers, checked with the
 * chat request's own schemas (`invalid_wallet`, `invalid_limits`: 400 problem+json). Puts them on
 * `c.var.payerConfig`, from which the `payer` middleware builds the session's payer.
 */
export function readPayerHeaders(): Middleware<PayerConfigVars> {
  return async (c, next) => {
    const walletAddress = c.req.header(WALLET_HEADER);
    const limits = c.req.header(LIMITS_HEADER);
    let spendingLimits: unknown;
    if (limits !== undefined) {
      try {
        spendingLimits = parseJsonAmountsAsWritten(limits);
      } catch {
        throw new AppError("invalid_limits", `The ${LIMITS_HEADER} header is not JSON.`);
      }
    }
    const config = parsePayerConfig(
      {
        ...(walletAddress !== undefined ? { walletAddress } : {}),
        ...(spendingLimits !== undefined ? { spendingLimits } : {}),
      },
      "The MCP session's header",
      parseWallet,
    );
    const tab = c.req.header(TAB_HEADER);
    if (tab !== undefined && !config.wallet)
      throw new AppError("tab_invalid", `The ${TAB_HEADER} header needs the wallet that funded the tab.`);
    c.set("payerConfig", tab !== undefined ? { ...config, tab: parseTabToken(tab) } : config);
    await next();
  };
}

const LOOPBACK = new Set(["localhost", "127.0.0.1", "[::1]"]);

/**
 * The MCP transport's rule against DNS rebinding: a request a browser sends carries `Origin`, and
 * one from a page that is neither on a loopback host nor listed in CORS_ORIGINS is refused (401
 * `unauthorized`) before anything runs. MCP clients that are programs send no `Origin`.
 */
export function checkOrigin(origins: readonly string[]): Middleware {
  return async (c, next) => {
    const origin = c.req.header("origin");
    if (origin !== undefined && !origins.includes(origin)) {
      let host = "";
      try {
        host = new URL(origin).hostname;
      } catch {}
      if (!LOOPBACK.has(host)) {
        throw new AppError(
          "unauthorized",
          `MCP requests from pages on ${origin.slice(0, 200)} are not accepted.`,
        );
      }
    }
    await next();
  };
}

/**
 * The MCP POST's body, bounded and parsed, its revision, and the scope of its payer: on 2025-11-25
 * the session (minted at `initialize`, else the `Mcp-Session-Id` sent back), on 2026-07-28 the
 * request. A malformed message is refused here, so it costs the caller no quota.
 */
function readMcpMessage(): Middleware<McpMessageVars> {
  return async (c, next) => {
    // Refused here as every other route refuses them (problem+json), not in the SDK's own shape.
    requireJson(c.req.raw);
    if (mediaTypeOf(c.req.header("content-type")) !== "application/json")
      throw new AppError("unsupported_media_type", "POST /mcp takes Content-Type: application/json.", {
        details: { accepted: ["application/json"] },
      });
    if (!acceptsMcpAnswers(c.req.header("accept")))
      throw new AppError(
        "not_acceptable",
        "Send Accept: application/json, text/event-stream (an MCP answer comes as either).",
        { details: { accepted: ["application/json", "text/event-stream"] } },
      );
    // Read as every other body is: bounded while reading, so a chunked upload is never held whole.
    const body = parseMcpBody(await readBodyText(c.req.raw, MCP_MAX_BODY_BYTES, nodeRequest(c)));
    const era = await mcpEraOf(c.req.raw, body);
    c.set("mcpBody", body);
    c.set("mcpEra", era);
    c.set("mcpSessionId", mcpSessionOf(body, c.req.header(MCP_SESSION_HEADER), era));
    await next();
  };
}

const mediaTypeOf = (value: string | undefined) => value?.split(";")[0]?.trim().toLowerCase() ?? "";

/** Whether an `Accept` takes both answers the MCP transport gives (types compared as types, any case). */
function acceptsMcpAnswers(accept: string | undefined): boolean {
  const types = (accept ?? "").split(",").map(mediaTypeOf);
  const takes = (type: string) =>
    types.includes(type) || types.includes(`${type.split("/")[0]}/*`) || types.includes("*/*");
  return takes("application/json") && takes("text/event-stream");
}

/**
 * The SDK's answer without the `Connection: keep-alive` it sets on streams: the server keeps the
 * connection or closes it as the request asked (a client that said `close` waited seconds).
 */
function asRequested(response: Response): Response {
  if (response.headers.get("connection")?.toLowerCase() !== "keep-alive") return response;
  const headers = new Headers(response.headers);
  headers.delete("connection");
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
}

/**
 * The request as the SDK reads it (its body already read, handed over parsed): `Accept` spelled as
 * the SDK compares it, once `acceptsMcpAnswers` took the client's (another case, a wildcard).
 */
function forSdk(request: Request): Request {
  const headers = new Headers(request.headers);
  headers.set("accept", "application/json, text/event-stream");
  return new Request(request.url, { method: request.method, headers, signal: request.signal });
}

/** The 32-byte key 2026-07-28 request states are sealed with, derived from QUOTE_SECRET. */
function stateKeyOf(secret: string | undefined): Uint8Array | undefined {
  if (secret === undefined) return undefined;
  return createHmac("sha256", secret).update("x402-chat-agent mcp requestState v1").digest();
}

/**
 * `POST /mcp`: the MCP server (Streamable HTTP, stateless; src/mcp) behind the same bearer auth,
 * payer and rate limit as `/api/chat`. The session's wallet and limits come from its headers,
 * never a tool.
 */
export function mountMcp(app: Hono, deps: McpRouteDeps): void {
  const answers = new ElicitationAnswers();
  const calls = new RunningCalls();
  const stateKey = stateKeyOf(deps.stateSecret);
  app.post(
    "/mcp",
    checkOrigin(deps.origins),
    readPayerHeaders(),
    deps.auth,
    readMcpMessage(),
    payer<PayerConfigVars & McpMessageVars>((vars) => ({
      config: vars.payerConfig,
      scopeId: vars.mcpSessionId,
      servedTabs: true,
    })),
    // Tool calls count; the handshake, tools/list, notifications and answers do not.
    rateLimitPayer<PayerVars & McpMessageVars>(deps.quota, (vars) => mcpCountsAgainstQuota(vars.mcpBody)),
    (c) =>
      handleMcpHttp(
        forSdk(c.req.raw),
        c.var.mcpBody,
        c.var.payer,
        {
          face: deps.face,
          answers,
          calls,
          approvalUrl: deps.approvalUrl,
          ...(deps.tabs ? { tabs: deps.tabs } : {}),
          callTimeoutMs: deps.requestTimeoutMs,
          ...(deps.now ? { now: deps.now } : {}),
          ...(stateKey ? { stateKey } : {}),
          onError: (error) => deps.logger.error("mcp tool error", { err: error }),
          keep: (work) => deps.lifecycle.keep(work),
        },
        c.var.mcpEra,
      ).then(asRequested),
  );
  app.all("/mcp", () =>
    problemResponse(new AppError("method_not_allowed", "This MCP server is stateless: use POST /mcp."), {
      Allow: "POST",
    }),
  );
}
