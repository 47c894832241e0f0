import type { Context, Hono } from "hono";
import type { RateLimiter } from "../ratelimit/rate-limit.js";
import { parseChallengeInput, parseSignInRequest, type WalletSignIn } from "../signin/index.js";
import { readJsonBody } from "./body.js";
import { nodeRequest } from "./chat-request.js";
import { rateLimitIp } from "./rate-limit.js";

/**
 * Signing in with a wallet (docs/protocol.md, "Signing in with a wallet"): `POST
 * /api/auth/wallet/nonce` issues the message a wallet signs, `POST /api/auth/wallet` takes it back
 * signed and answers a session token that reads that wallet's payment history (GET /api/payments,
 * /api/payments/:id) and nothing else; `DELETE /api/auth/wallet` with that token signs out. No bearer identity; rate-limited by the client's IP.
 * Refusals are AppErrors (the app's problem+json); the token is never logged.
 */
export interface WalletAuthRoutesDeps {
  signIn: Pick<WalletSignIn, "challenge" | "signIn" | "signOut">;
  rateLimiter: RateLimiter;
  clientIp: (c: Context) => string;
}

/** An address and a chain id: 1 KB is plenty. */
const MAX_NONCE_BODY_BYTES = 1024;
/** The message's fields and a signature (a contract wallet's may be a few KB). */
const MAX_SIGN_IN_BODY_BYTES = 16 * 1024;

export function mountWalletAuthRoutes(app: Hono, deps: WalletAuthRoutesDeps): void {
  const limit = rateLimitIp({ rateLimiter: deps.rateLimiter, clientIp: deps.clientIp });
  app.post("/api/auth/wallet/nonce", limit, async (c) => {
    const body = await readJsonBody(c.req.raw, MAX_NONCE_BODY_BYTES, nodeRequest(c));
    // A page names its site (Origin); the sign-in decides whether the message may name it.
    const challenge = await deps.signIn.challenge(parseChallengeInput(body), c.req.header("origin"));
    return c.json(challenge, 200, { "Cache-Control": "no-store" });
  });
  app.post("/api/auth/wallet", limit, async (c) => {
    const body = await readJsonBody(c.req.raw, MAX_SIGN_IN_BODY_BYTES, nodeRequest(c));
    const session = await deps.signIn.signIn(parseSignInRequest(body));
    return c.json(session, 200, { "Cache-Control": "no-store" });
  });
  // Signing out: the session's own token ends it (204, also when it had ended already: nothing to
  // tell a caller that does not hold a live one).
  app.delete("/api/auth/wallet", limit, async (c) => {
    const bearer = /^Bearer\s+(\S+)$/i.exec(c.req.header("authorization") ?? "")?.[1];
    if (bearer) await deps.signIn.signOut(bearer);
    return c.body(null, 204, { "Cache-Control": "no-store" });
  });
}
