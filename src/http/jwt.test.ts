import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Hono } from "hono";
import { exportJWK, generateKeyPair, type JWK, SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../config/index.js";
import { AppError } from "../errors/index.js";
import { auth } from "./auth.js";
import { createJwtVerifier, grantOf, type JwtVerifierOptions } from "./jwt.js";
import { problemResponse } from "./problem.js";
import type { AuthVars } from "./vars.js";

/**
 * docs/deploy.md#logins-from-your-identity-provider: bearer JWTs verified with jose against a
 * key set served here on loopback (node:http), with keys made by jose's generateKeyPair.
 */

type Keys = Awaited<ReturnType<typeof generateKeyPair>>;
let provider: Keys;
let stranger: Keys;
let server: Server;
let jwksUrl: string;
let jwks: { keys: JWK[] } = { keys: [] };
let answer: "keys" | "error" = "keys";
let fetches = 0;

const ISSUER = "https://login.example.com/";
const AUDIENCE = "x402-chat-agent";

beforeAll(async () => {
  provider = await generateKeyPair("ES256");
  stranger = await generateKeyPair("ES256");
  jwks = { keys: [{ ...(await exportJWK(provider.publicKey)), kid: "k1", alg: "ES256", use: "sig" }] };
  server = createServer((_req, res) => {
    fetches += 1;
    if (answer === "error") {
      res.writeHead(500).end();
      return;
    }
    res.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify(jwks));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  jwksUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/.well-known/jwks.json`;
});

afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
});

function options(over: Partial<JwtVerifierOptions> = {}): JwtVerifierOptions {
  return { jwksUrl, issuer: ISSUER, audience: [AUDIENCE], callerClaim: "sub", ...over };
}

interface Sign {
  claims?: Record<string, unknown>;
  issuer?: string;
  audience?: string;
  expires?: string | number | null;
  key?: Keys;
  kid?: string;
}

function sign({
  claims = {},
  issuer = ISSUER,
  audience = AUDIENCE,
  expires = "5m",
  key = provider,
  kid = "k1",
}: Sign = {}) {
  const jwt = new SignJWT({ sub: "user-123", ...claims })
    .setProtectedHeader({ alg: "ES256", kid })
    .setIssuer(issuer)
    .setAudience(audience)
    .setIssuedAt();
  if (expires !== null) jwt.setExpirationTime(expires);
  return jwt.sign(key.privateKey);
}

describe("createJwtVerifier", () => {
  it("names the caller of a valid token from the provider", async () => {
    const verify = createJwtVerifier(options());
    expect(await verify(await sign())).toEqual({ caller: "user-123" });
    const byEmail = createJwtVerifier(options({ callerClaim: "email" }));
    expect(await byEmail(await sign({ claims: { email: "ana@example.com" } }))).toEqual({
      caller: "ana@example.com",
    });
  });

  it("refuses another issuer, another audience, an expired token and one without expiry", async () => {
    const verify = createJwtVerifier(options());
    expect(await verify(await sign({ issuer: "https://evil.example.com/" }))).toBeUndefined();
    expect(await verify(await sign({ audience: "another-app" }))).toBeUndefined();
    expect(await verify(await sign({ expires: Math.floor(Date.now() / 1000) - 3600 }))).toBeUndefined();
    expect(await verify(await sign({ expires: null }))).toBeUndefined();
  });

  it("refuses a token signed by a key not in the set, under its key id or another", async () => {
    const verify = createJwtVerifier(options());
    expect(await verify(await sign({ key: stranger }))).toBeUndefined();
    expect(await verify(await sign({ key: stranger, kid: "k2" }))).toBeUndefined();
  });

  it("refuses an HMAC token, a token without the caller claim, and what is not a JWT, untouched", async () => {
    const verify = createJwtVerifier(options());
    const hmac = await new SignJWT({ sub: "user-123" })
      .setProtectedHeader({ alg: "HS256", kid: "k1" })
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setExpirationTime("5m")
      .sign(new TextEncoder().encode("a shared secret of thirty-two bytes!"));
    expect(await verify(hmac)).toBeUndefined();
    expect(await createJwtVerifier(options({ callerClaim: "email" }))(await sign())).toBeUndefined();
    const before = fetches;
    expect(await verify("token-for-alice-0123456789")).toBeUndefined();
    expect(fetches).toBe(before);
  });

  it("reads the key set once and keeps it", async () => {
    const verify = createJwtVerifier(options());
    const before = fetches;
    for (let i = 0; i < 3; i++) expect(await verify(await sign())).toBeDefined();
    expect(fetches - before).toBe(1);
  });

  it("turns the limits claim into the caller's grant, in atomic units with canonical wallets", async () => {
    const verify = createJwtVerifier(options({ limitsClaim: "x402" }));
    const limits = {
      perTransaction: "0.10",
      daily: "5",
      wallets: ["0x52908400098527886e0f7030069857d2e4169ee7"],
    };
    expect(await verify(await sign({ claims: { x402: limits } }))).toEqual({
      caller: "user-123",
      grant: {
        name: "user-123",
        perTransaction: 100_000n,
        daily: 5_000_000n,
        wallets: ["0x52908400098527886E0F7030069857D2E4169EE7"],
      },
    });
    // Absent: the server's caps only. Malformed: the token is refused, never taken as unlimited.
    expect(await verify(await sign())).toEqual({ caller: "user-123" });
    expect(await verify(await sign({ claims: { x402: { daily: "lots" } } }))).toBeUndefined();
  });

  it("throws not_ready when the key set cannot be read, and verifies again once it can", async () => {
    const verify = createJwtVerifier(options());
    answer = "error";
    try {
      const refused = await verify(await sign()).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(AppError);
      expect((refused as AppError).code).toBe("not_ready");
    } finally {
      answer = "keys";
    }
    expect(await verify(await sign())).toEqual({ caller: "user-123" });
  });
});

describe("grantOf", () => {
  it("refuses unknown fields, numbers, bad amounts and bad wallets", () => {
    expect(grantOf("u", { perRequest: "1", raise: "9" })).toBeUndefined();
    expect(grantOf("u", { perRequest: 1 })).toBeUndefined();
    expect(grantOf("u", { perRequest: "-1" })).toBeUndefined();
    expect(grantOf("u", { wallets: ["0x123"] })).toBeUndefined();
    expect(grantOf("u", "0.10")).toBeUndefined();
    expect(grantOf("u", {})).toEqual({ name: "u" });
  });
});

describe("JWT configuration", () => {
  const jwt = { JWKS_URL: "https://login.example.com/jwks.json", JWT_ISSUER: ISSUER, JWT_AUDIENCE: "a,b" };

  it("takes all three, with sub as the caller claim by default", () => {
    expect(loadConfig(jwt).auth.jwt).toEqual({
      jwksUrl: "https://login.example.com/jwks.json",
      issuer: ISSUER,
      audience: ["a", "b"],
      callerClaim: "sub",
    });
    expect(loadConfig({}).auth.jwt).toBeUndefined();
  });

  it("refuses a partial set, and a key set over plain http off loopback", () => {
    expect(() => loadConfig({ JWKS_URL: jwt.JWKS_URL })).toThrow(ConfigError);
    expect(() => loadConfig({ JWKS_URL: jwt.JWKS_URL })).toThrow(/JWT_ISSUER, JWT_AUDIENCE: required/);
    expect(() => loadConfig({ ...jwt, JWKS_URL: "http://login.example.com/jwks.json" })).toThrow(/JWKS_URL/);
    expect(loadConfig({ ...jwt, JWKS_URL: "http://127.0.0.1:8080/jwks.json" }).auth.jwt?.jwksUrl).toBe(
      "http://127.0.0.1:8080/jwks.json",
    );
  });
});

describe("auth with JWTs", () => {
  // The middleware every API route runs: a verified token names the caller `jwt:<claim>`, beside
  // AUTH_TOKENS and operator keys, so no subject can take another identity's name.
  async function callerOf(token: string | undefined, tokens = new Map<string, string>()) {
    const app = new Hono<{ Variables: AuthVars }>();
    app.use("*", auth({ authTokens: tokens, requireAuth: true, jwt: createJwtVerifier(options()) }));
    app.get("/", (c) => c.json({ caller: c.var.caller ?? null, grant: c.var.grant ?? null }));
    app.onError((error) => problemResponse(error as AppError));
    const res = await app.request("/", token ? { headers: { Authorization: `Bearer ${token}` } } : {});
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  }

  it("names a verified token's caller jwt:<sub>, and its limits become the grant under that name", async () => {
    expect(await callerOf(await sign())).toEqual({
      status: 200,
      body: { caller: "jwt:user-123", grant: null },
    });
    const verify = createJwtVerifier(options({ limitsClaim: "x402" }));
    const limited = await verify(await sign({ claims: { x402: { daily: "0.02" } } }));
    expect(limited?.grant?.daily).toBe(20_000n);
  });

  it("refuses a token of another issuer as an unknown token, and a subject named like an AUTH_TOKENS identity stays apart", async () => {
    expect((await callerOf(await sign({ issuer: "https://evil.example.com/" }))).status).toBe(401);
    const named = await callerOf(
      await sign({ claims: { sub: "alice" } }),
      new Map([["alice-token", "alice"]]),
    );
    expect(named.body.caller).toBe("jwt:alice");
    expect((await callerOf("alice-token", new Map([["alice-token", "alice"]]))).body.caller).toBe("alice");
  });
});
