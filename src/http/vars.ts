import type { Context, MiddlewareHandler } from "hono";
import type { ChatRequest, PayerConfig } from "../protocol/index.js";
import type { HeldClaim } from "./idempotency.js";

/** Who is calling: the bearer identity and its token, both absent for an anonymous caller. */
export interface Caller {
  identity?: string;
  token?: string;
}

/**
 * What the middleware in front of a route puts on `c.var` (Hono's typed `Variables`), in the order
 * they run on `POST /api/chat`: the parsed request, the caller, the caller's quota key, the
 * idempotency claim. A route only reads what its own middleware set.
 */
export interface HttpVariables {
  /** The request body as parsed JSON (its hash is the idempotency fingerprint). */
  body: unknown;
  /** The validated chat request. */
  chat: ChatRequest;
  /** An MCP session's wallet and limits, from its headers (`POST /mcp`; src/http/mcp.ts). */
  payer: PayerConfig;
  /** Set by the auth middleware. */
  caller: Caller;
  /** The Idempotency-Key header, once checked (absent when not sent). */
  idempotencyKey: string | undefined;
  /** The caller's quota key (`id:`, `wallet:` or `ip:`); idempotency keys are scoped to it. */
  callerKey: string;
  /** This attempt's chat request id (its payments carry it). */
  requestId: string;
  /** The idempotency claim this attempt holds, if any: completed or released when the turn ends. */
  claim: HeldClaim | undefined;
}

export interface HttpEnv {
  Variables: HttpVariables;
}

export type HttpContext = Context<HttpEnv>;
export type HttpMiddleware = MiddlewareHandler<HttpEnv>;
