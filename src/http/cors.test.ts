import { describe, expect, it } from "vitest";
import { buildService, chatRequest, USER_HI } from "../../test/helpers.js";
import { CORS_EXPOSE_HEADERS } from "./cors.js";

const LISTED = "https://app.example.com";
const OTHER = "https://evil.example.com";

function preflight(origin: string, method = "POST") {
  return {
    method: "OPTIONS",
    headers: {
      Origin: origin,
      "Access-Control-Request-Method": method,
      "Access-Control-Request-Headers": "content-type, authorization, idempotency-key",
    },
  };
}

/** Every header a CORS-aware browser reads, by name. */
function corsHeaders(res: Response): Record<string, string> {
  const out: Record<string, string> = {};
  res.headers.forEach((value, name) => {
    if (name.startsWith("access-control-")) out[name] = value;
  });
  return out;
}

describe("CORS with an allow-list (CORS_ORIGINS)", () => {
  const token = "token-for-alice-0123456789";
  const { app } = buildService({
    CORS_ORIGINS: `${LISTED},http://localhost:5173`,
    AUTH_TOKENS: `alice=${token}`,
    RATE_LIMIT_POINTS: "2",
  });

  it("answers a listed origin's preflight with 204, the methods and the headers the API takes", async () => {
    for (const path of ["/api/chat", "/api/payments/pay_x", "/api/payments", "/api/approvals/pay_x"]) {
      const res = await app.request(path, preflight(LISTED, path === "/api/payments" ? "GET" : "POST"));
      expect(res.status).toBe(204);
      expect(res.headers.get("access-control-allow-origin")).toBe(LISTED);
      expect(res.headers.get("access-control-allow-methods")).toContain("POST");
      const allowed = (res.headers.get("access-control-allow-headers") ?? "").toLowerCase();
      for (const h of ["content-type", "authorization", "idempotency-key"]) expect(allowed).toContain(h);
      expect(res.headers.get("access-control-allow-credentials")).toBeNull();
      expect(res.headers.get("vary")).toContain("Origin");
    }
  });

  // Found by a black-box run: a listed page was issued a sign-in message for it, but could not send it.
  it("lets a listed page sign in with a wallet and out again: nonce, sign-in and sign-out preflights", async () => {
    for (const [path, method] of [
      ["/api/auth/wallet/nonce", "POST"],
      ["/api/auth/wallet", "POST"],
      ["/api/auth/wallet", "DELETE"],
    ] as const) {
      const res = await app.request(path, preflight(LISTED, method));
      expect(res.status, `${method} ${path}`).toBe(204);
      expect(res.headers.get("access-control-allow-origin")).toBe(LISTED);
      expect(res.headers.get("access-control-allow-methods")).toContain(method);
    }
    const answer = await app.request("/api/auth/wallet/nonce", {
      method: "POST",
      headers: { Origin: LISTED, "Content-Type": "application/json" },
      body: "{}",
    });
    expect(answer.headers.get("access-control-allow-origin")).toBe(LISTED);
  });

  it("gives an unlisted origin no CORS header at all, and never echoes it", async () => {
    const res = await app.request("/api/chat", preflight(OTHER));
    expect(res.status).not.toBe(204);
    expect(corsHeaders(res)).toEqual({});
    expect(res.headers.get("vary")).toContain("Origin");

    const post = await app.request("/api/chat", chatRequest(USER_HI, { Origin: OTHER }));
    expect(post.status).toBe(200);
    await post.text();
    expect(corsHeaders(post)).toEqual({});
    expect(post.headers.get("vary")).toContain("Origin");
  });

  it("names a listed origin on a streamed answer and exposes what a client reads", async () => {
    const res = await app.request(
      "/api/chat",
      chatRequest(USER_HI, { Origin: LISTED, Authorization: `Bearer ${token}` }),
    );
    expect(res.status).toBe(200);
    await res.text();
    expect(res.headers.get("access-control-allow-origin")).toBe(LISTED);
    const exposed = (res.headers.get("access-control-expose-headers") ?? "").toLowerCase();
    for (const h of ["x-request-id", "x-chat-protocol", "idempotent-replayed", "retry-after"]) {
      expect(exposed).toContain(h);
    }
    expect(res.headers.get("access-control-expose-headers")).toBe(CORS_EXPOSE_HEADERS);
    expect(res.headers.get("vary")).toContain("Origin");
  });

  it("puts the headers on problem+json errors too (400, 401, 404, 429), so the page can read them", async () => {
    const bad = await app.request("/api/chat", chatRequest("{", { Origin: LISTED }));
    const unauthorized = await app.request(
      "/api/chat",
      chatRequest(USER_HI, { Origin: LISTED, Authorization: "Bearer nope-nope-nope-nope" }),
    );
    const missing = await app.request("/api/payments/pay_00000000-0000-0000-0000-000000000000", {
      headers: { Origin: LISTED, Authorization: "Bearer nope-nope-nope-nope" },
    });
    expect([bad.status, unauthorized.status]).toEqual([400, 401]);
    // Payments are off in this service: the route does not exist, and the 404 is readable too.
    expect(missing.status).toBe(404);
    for (const res of [bad, unauthorized, missing]) {
      expect(res.headers.get("content-type")).toBe("application/problem+json");
      expect(res.headers.get("access-control-allow-origin")).toBe(LISTED);
    }

    const ip = { Origin: LISTED, "Content-Type": "application/json" };
    let limited: Response | undefined;
    for (let i = 0; i < 4 && limited?.status !== 429; i++) {
      limited = await app.request("/api/chat", {
        method: "POST",
        headers: ip,
        body: JSON.stringify(USER_HI),
      });
      if (limited.status === 200) await limited.text();
    }
    expect(limited?.status).toBe(429);
    expect(limited?.headers.get("access-control-allow-origin")).toBe(LISTED);
    expect(limited?.headers.get("retry-after")).toBe("50");
    expect(limited?.headers.get("access-control-expose-headers")).toContain("Retry-After");
  });

  it("leaves the page, the probes and the devnet's keys same-origin only", async () => {
    for (const path of ["/healthz", "/readyz", "/api/devnet/wallets"]) {
      const res = await app.request(path, { headers: { Origin: LISTED } });
      expect(res.headers.get("access-control-allow-origin")).toBeNull();
      const pre = await app.request(path, preflight(LISTED, "GET"));
      expect(pre.headers.get("access-control-allow-origin")).toBeNull();
    }
  });

  it("with no CORS_ORIGINS, gives no origin any CORS header (same-origin only)", async () => {
    const { app: plain } = buildService();
    const res = await plain.request("/api/chat", preflight(LISTED));
    expect(res.status).toBe(405);
    expect(corsHeaders(res)).toEqual({});
  });
});
