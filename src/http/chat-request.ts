import { IncomingMessage } from "node:http";
import type { Context } from "hono";
import { parseWallet } from "../chains/index.js";
import { parseChatRequest, REQUEST_BOUNDS } from "../protocol/index.js";
import { readJsonBody } from "./body.js";
import type { ChatVars, Middleware } from "./vars.js";

/** The Node request under @hono/node-server (`c.env.incoming`); undefined elsewhere (`app.request`). */
export function nodeRequest(c: Context): IncomingMessage | undefined {
  const incoming = (c.env as { incoming?: unknown } | undefined)?.incoming;
  return incoming instanceof IncomingMessage ? incoming : undefined;
}

/**
 * Reads and validates the chat request (src/http/body.ts: 413, 415, 400) before anything else
 * looks at it, and puts it on `c.var.chat` (and the parsed JSON on `c.var.body`). A malformed
 * request is refused here, so it costs the caller no quota.
 */
export function readChatRequest(): Middleware<ChatVars> {
  return async (c, next) => {
    const body = await readJsonBody(c.req.raw, REQUEST_BOUNDS.maxBodyBytes, nodeRequest(c));
    c.set("chat", parseChatRequest(body, parseWallet));
    c.set("body", body);
    await next();
  };
}
