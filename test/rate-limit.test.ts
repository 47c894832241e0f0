import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { quotaInMemory } from "../src/ratelimit/memory.js";
import { createRateLimiter } from "../src/ratelimit/rate-limit.js";
import { buildService, chatRequest, singleModelRegistry, sleep, textModel, USER_HI } from "./helpers.js";

const EVM_A = "0x52908400098527886E0F7030069857D2E4169EE7";
const EVM_B = "0x8617E340B3D01FA5F11F306F4090FD50E238070D";

describe("rate limiting over HTTP", () => {
  it("answers 429 with Retry-After: 50 and problem+json, before any model call", async () => {
    const model = textModel(["ok"]);
    const { app } = buildService({ RATE_LIMIT_POINTS: "2" }, { models: singleModelRegistry(model) });
    for (let i = 0; i < 2; i++) {
      const ok = await app.request("/api/chat", chatRequest({ ...USER_HI, walletAddress: EVM_A }));
      expect(ok.status).toBe(200);
      await ok.text();
    }
    const calls = model.doStreamCalls.length;
    const limited = await app.request("/api/chat", chatRequest({ ...USER_HI, walletAddress: EVM_A }));
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBe("50");
    expect(limited.headers.get("content-type")).toBe("application/problem+json");
    expect(await limited.json()).toMatchObject({ status: 429, code: "rate_limited", retryAfterSeconds: 50 });
    expect(model.doStreamCalls.length).toBe(calls);

    // Keyed on the wallet: another wallet from the same client still has its quota.
    const other = await app.request("/api/chat", chatRequest({ ...USER_HI, walletAddress: EVM_B }));
    expect(other.status).toBe(200);
    await other.text();
  });

  it("keys on the authenticated identity before the wallet", async () => {
    const token = "token-for-alice-0123456789";
    const { app } = buildService({ RATE_LIMIT_POINTS: "1", AUTH_TOKENS: `alice=${token}` });
    const auth = { Authorization: `Bearer ${token}` };
    const first = await app.request("/api/chat", chatRequest({ ...USER_HI, walletAddress: EVM_A }, auth));
    expect(first.status).toBe(200);
    await first.text();
    const second = await app.request("/api/chat", chatRequest({ ...USER_HI, walletAddress: EVM_B }, auth));
    expect(second.status).toBe(429);
  });

  it("does not count malformed requests against the quota", async () => {
    const { app } = buildService({ RATE_LIMIT_POINTS: "1" });
    for (let i = 0; i < 3; i++) expect((await app.request("/api/chat", chatRequest("{"))).status).toBe(400);
    const ok = await app.request("/api/chat", chatRequest(USER_HI));
    expect(ok.status).toBe(200);
    await ok.text();
  });
});

describe("memory rate limiter cooldown", () => {
  it("blocks for exactly 50 s: refused at 49.9 s, allowed at 50 s", async () => {
    let now = Date.parse("2026-01-01T00:00:00Z");
    const limiter = createRateLimiter({ points: 1, durationS: 60, blockS: 50, now: () => now });
    expect(await limiter.consume("k")).toEqual({ ok: true });
    expect(await limiter.consume("k")).toEqual({ ok: false, retryAfterS: 50 });
    now += 49_900;
    expect(await limiter.consume("k")).toEqual({ ok: false, retryAfterS: 1 });
    now += 100;
    expect(await limiter.consume("k")).toEqual({ ok: true });
    await limiter.close();
  });

  it("counts a window from its first request, and a new one after it", async () => {
    let now = 0;
    const limiter = createRateLimiter({ points: 2, durationS: 60, blockS: 50, now: () => now });
    expect((await limiter.consume("k")).ok).toBe(true);
    now += 59_000;
    expect((await limiter.consume("k")).ok).toBe(true);
    now += 1_000;
    // The window ended: two more, then the third is refused for the whole block.
    expect((await limiter.consume("k")).ok).toBe(true);
    expect((await limiter.consume("k")).ok).toBe(true);
    expect(await limiter.consume("k")).toEqual({ ok: false, retryAfterS: 50 });
    expect((await limiter.consume("other")).ok).toBe(true);
  });

  it("keeps at most its bound of keys, and a blocked key stays blocked while it is kept", async () => {
    let now = 0;
    const quota = quotaInMemory({ points: 1, windowMs: 60_000, blockMs: 50_000 }, () => now, 2_000);
    expect(await quota.consume("blocked")).toBe(0);
    expect(await quota.consume("blocked")).toBe(50_000);
    for (let i = 0; i < 1_500; i++) await quota.consume(`wallet-${i}`);
    now += 10_000;
    expect(await quota.consume("blocked")).toBe(40_000);
    // A flood of new names far past the bound: the map stays bounded, the oldest go first.
    for (let i = 0; i < 10_000; i++) await quota.consume(`flood-${i}`);
    expect(quota.size()).toBeLessThanOrEqual(2_000);
    expect(await quota.consume("flood-9999")).toBeGreaterThan(0);
    // Once the window and the block are over, a sweep forgets every key.
    now += 60_000;
    for (let i = 0; i < 1_100; i++) await quota.consume(`late-${i}`);
    expect(quota.size()).toBeLessThan(1_200);
  });
});

describe.skipIf(!process.env.REDIS_URL)("Redis rate limiter (REDIS_URL)", () => {
  it("two processes sharing Redis keep one combined quota, and the block expires", async () => {
    const prefix = `test-rl-${randomUUID()}`;
    const options = { points: 3, durationS: 60, blockS: 0.2, redisUrl: process.env.REDIS_URL, prefix };
    const a = createRateLimiter(options);
    const b = createRateLimiter(options);
    try {
      const results = await Promise.all([a, b, a, b, a].map((l) => l.consume("wallet:x")));
      expect(results.filter((r) => r.ok)).toHaveLength(3);
      const refused = results.find((r) => !r.ok);
      expect(refused).toEqual({ ok: false, retryAfterS: 1 });
      expect((await a.consume("wallet:x")).ok).toBe(false);
      // The block is an expiry on Redis's own clock, which a test cannot move: a short one.
      await sleep(250);
      expect((await b.consume("wallet:x")).ok).toBe(true);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it("gives Retry-After 50 from Redis through the app", async () => {
    // A unique identity per run, because Redis outlives the test.
    const name = `user-${randomUUID()}`;
    const token = `token-${randomUUID()}`;
    const { app, shutdown } = buildService({
      RATE_LIMIT_POINTS: "1",
      REDIS_URL: process.env.REDIS_URL ?? "",
      AUTH_TOKENS: `${name}=${token}`,
    });
    const auth = { Authorization: `Bearer ${token}` };
    const first = await app.request("/api/chat", chatRequest(USER_HI, auth));
    expect(first.status).toBe(200);
    await first.text();
    const second = await app.request("/api/chat", chatRequest(USER_HI, auth));
    expect(second.status).toBe(429);
    expect(second.headers.get("retry-after")).toBe("50");
    await shutdown();
  });
});
