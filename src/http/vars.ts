import type { Context, MiddlewareHandler } from "hono";
import type { KeyGrant, Payer } from "../payments/index.js";
import type { ChatRequest, PayerConfig } from "../protocol/index.js";
import type { HeldClaim } from "./idempotency.js";

/**
 * What each middleware puts on `c.var` (Hono's typed `Variables`), one type per middleware: a
 * route's `c.var` is exactly the sum of what its middleware set, and a middleware declares what it
 * reads from the ones before it. `POST /api/chat` runs, in order: `ChatVars` (chat-request.ts),
 * `AuthVars` (auth.ts), `IdempotencyKeyVars` (claim.ts), `PayerVars` (payer.ts), `QuotaVars`
 * (rate-limit.ts), `ClaimVars` (claim.ts). `POST /mcp`: `PayerConfigVars` (mcp.ts), `AuthVars`,
 * `PayerVars`, `QuotaVars`.
 */

/** The validated chat request, and its body as parsed JSON (the idempotency fingerprint's input). */
export interface ChatVars {
  chat: ChatRequest;
  body: unknown;
}

/**
 * Who is calling (auth.ts): the bearer identity and its token, both absent for an anonymous caller,
 * and what an operator key allows (docs/deploy.md#operating-it), absent for any other caller.
 */
export interface AuthVars {
  caller: string | undefined;
  bearerToken: string | undefined;
  grant: KeyGrant | undefined;
}

/** An MCP session's wallet and limits, from its headers (mcp.ts). */
export interface PayerConfigVars {
  payerConfig: PayerConfig;
}

/** The Idempotency-Key header, once checked (absent when not sent). */
export interface IdempotencyKeyVars {
  idempotencyKey: string | undefined;
}

/** Who pays within what, built once from the caller and its request (payer.ts). */
export interface PayerVars {
  payer: Payer;
}

/** The caller's quota key (`id:`, `wallet:` or `ip:`); idempotency keys are scoped to it. */
export interface QuotaVars {
  callerKey: string;
}

/** The idempotency claim this attempt holds, if any: completed or released when the turn ends. */
export interface ClaimVars {
  claim: HeldClaim | undefined;
}

/** A middleware that reads `Reads` and sets `Sets` on `c.var`. */
export type Middleware<Sets extends object = object, Reads extends object = object> = MiddlewareHandler<{
  Variables: Sets & Reads;
}>;

/** The context of a route or middleware whose `c.var` holds `Vars`. */
export type VarsContext<Vars extends object = object> = Context<{ Variables: Vars }>;

/** Everything `POST /api/chat`'s middleware put on `c.var` once they all ran. */
export type ChatRouteVars = ChatVars & AuthVars & IdempotencyKeyVars & PayerVars & QuotaVars & ClaimVars;
