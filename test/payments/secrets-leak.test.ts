/**
 * Secrets never leave where they belong (docs/deploy.md#operating-it, docs/deploy.md#traces-and-metrics):
 * paid turns with each kind of bearer token (the devnet's dev token, an AUTH_TOKENS token, an
 * operator key's `x4c_` token, a JWT of the identity provider), then every place a secret could
 * leak is read whole: the service's log lines (at debug), the chat streams, the operator API's
 * answers, the audit export, /metrics and the spans exported over OTLP. None holds a bearer
 * token, the operator or metrics token, a wallet's key, or a payment's signature.
 */
import { exportJWK, generateKeyPair, SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { walletAddress } from "../../src/devnet/testing/index.js";
import { createLogger } from "../../src/log/index.js";
import {
  type Booted,
  boot,
  chat,
  chatBody,
  chatHeaders,
  chatRequest,
  rowsOf,
  secretStrings,
  sidecarServer,
  useTestDevnet,
} from "./harness.js";

const devnet = useTestDevnet();
const OPERATOR_TOKEN = "operator-token-secret-0123456789abcdef";
const METRICS_TOKEN = "metrics-token-secret-0123456789";
const ALICE_TOKEN = "alice-token-secret-0123456789abcdef";
const ISSUER = "https://login.test";
const AUDIENCE = "x402-chat";

/** One loopback server: the identity provider's key set and an OTLP/HTTP receiver. */
async function sidecar(jwks: unknown) {
  const bodies: string[] = [];
  const server = await sidecarServer(({ url, body }) => {
    if (url === "/jwks.json") return jwks;
    if (url === "/v1/traces") bodies.push(body);
    return undefined;
  });
  return { ...server, bodies };
}

describe("no secret leaks from a paid turn, whichever token pays", () => {
  let booted: Booted;
  let side: Awaited<ReturnType<typeof sidecar>>;
  const logLines: string[] = [];
  let jwt = "";

  beforeAll(async () => {
    const keys = await generateKeyPair("ES256");
    side = await sidecar({ keys: [{ ...(await exportJWK(keys.publicKey)), kid: "k1", alg: "ES256" }] });
    jwt = await new SignJWT({ sub: "user-7", x402: { wallets: [walletAddress(devnet, "evm", "payer")] } })
      .setProtectedHeader({ alg: "ES256", kid: "k1" })
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setExpirationTime("10m")
      .sign(keys.privateKey);
    vi.stubEnv("OTEL_EXPORTER_OTLP_ENDPOINT", side.url);
    vi.stubEnv("OTEL_SERVICE_NAME", "x402-secrets-test");
    booted = await boot(devnet, {
      store: "pglite",
      logger: createLogger({ level: "debug", destination: { write: (line: string) => logLines.push(line) } }),
      env: {
        OPERATOR_TOKEN,
        METRICS_TOKEN,
        AUTH_TOKENS: `alice=${ALICE_TOKEN}`,
        JWKS_URL: `${side.url}/jwks.json`,
        JWT_ISSUER: ISSUER,
        JWT_AUDIENCE: AUDIENCE,
        JWT_LIMITS_CLAIM: "x402",
      },
    });
  });
  afterAll(async () => {
    await booted?.close();
    vi.unstubAllEnvs();
    await side?.close();
  });

  it("logs, streams, operator answers, the audit export, /metrics and spans hold none", async () => {
    const { app } = booted.running.service;
    const operator = (path: string, init: RequestInit = {}) =>
      app.request(`/api/operator${path}`, {
        ...init,
        headers: { Authorization: `Bearer ${OPERATOR_TOKEN}`, "Content-Type": "application/json" },
      });
    const payer = walletAddress(devnet, "evm", "payer");
    const created = await operator("/keys", {
      method: "POST",
      body: JSON.stringify({ name: "ci", wallets: [payer] }),
    });
    expect(created.status).toBe(201);
    const keyToken = ((await created.json()) as { token: string }).token;
    const rotated = await operator("/keys/ci/rotate", { method: "POST" });
    const oldKeyToken = keyToken;
    const newKeyToken = ((await rotated.json()) as { token: string }).token;

    const seen: string[] = [];
    const turns: Array<[string, string]> = [
      ["dev token", devnet.manifest.devToken],
      ["operator key", newKeyToken],
      ["jwt", jwt],
      ["AUTH_TOKENS", ALICE_TOKEN],
    ];
    for (const [what, token] of turns) {
      const result = await chat(booted.running, { token, wallet: payer });
      expect(result.status, what).toBe(200);
      seen.push(result.raw, JSON.stringify([...result.headers]));
      if (what !== "AUTH_TOKENS") {
        expect(result.finish.finishReason, what).toBe("payment-complete");
        expect(
          (await rowsOf(booted.running, result)).map((r) => r.status),
          what,
        ).toEqual(["settled"]);
      }
    }
    // Refusals carry a token too: the old (rotated) key token, a wrong operator token on /metrics.
    const old = await app.request(
      "/api/chat",
      chatRequest(chatBody({ wallet: payer }), chatHeaders({ token: oldKeyToken })),
    );
    expect(old.status).toBe(401);
    seen.push(await old.text());
    seen.push(
      await (await app.request("/metrics", { headers: { Authorization: `Bearer ${ALICE_TOKEN}` } })).text(),
    );
    await booted.running.service.lifecycle.idle();

    for (const path of ["/keys", "/pauses", "/payments?limit=500", "/refusals?limit=500", "/audit/verify"])
      seen.push(await (await operator(path)).text());
    const audit = await (await operator("/audit?since=2000-01-01T00:00:00Z")).text();
    expect(audit.split("\n").length).toBeGreaterThan(5);
    seen.push(audit);
    const metrics = await app.request("/metrics", { headers: { Authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(metrics.status).toBe(200);
    seen.push(await metrics.text());
    // Shutting down flushes the spans to the receiver.
    await booted.close();
    expect(side.bodies.length).toBeGreaterThan(0);
    seen.push(...side.bodies, ...logLines);
    expect(logLines.length).toBeGreaterThan(0);

    const secrets: Array<[string, string]> = [
      ["operator token", OPERATOR_TOKEN],
      ["metrics token", METRICS_TOKEN],
      ["AUTH_TOKENS token", ALICE_TOKEN],
      ["key token", oldKeyToken],
      ["rotated key token", newKeyToken],
      ["jwt", jwt],
      ["jwt signature", jwt.split(".")[2] ?? jwt],
      ...secretStrings(devnet).map((s): [string, string] => ["devnet secret", s]),
    ];
    const all = seen.join("\n");
    for (const [what, secret] of secrets) expect(all.includes(secret), what).toBe(false);
    // The prefix names a key token wherever one would show: none does.
    expect(all).not.toMatch(/x4c_[A-Za-z0-9_-]{20,}/);
    // The payments' signatures are kept nowhere (the ledger holds the authorization's terms, not
    // its signature), so they are found by their shape: an EIP-3009 signature (65 bytes as hex)
    // and x402's base64 payment header (a JSON object starting {"x402Version").
    expect(all).not.toMatch(/(0x)?[0-9a-fA-F]{130}(?![0-9a-fA-F])/);
    expect(all).not.toContain(Buffer.from('{"x402Version"').toString("base64").slice(0, 16));
  });
});
