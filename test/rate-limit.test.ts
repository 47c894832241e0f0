import { randomUUID } from "node:crypto";
import { type AddressInfo, createServer, type Socket } from "node:net";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../src/config/index.js";
import { quotaInMemory } from "../src/ratelimit/memory.js";
import { createRateLimiter } from "../src/ratelimit/rate-limit.js";
import { buildService, chatRequest, singleModelRegistry, sleep, textModel, USER_HI } from "./helpers.js";

const EVM_A = "0x52908400098527886E0F7030069857D2E4169EE7";
const EVM_B = "0x8617E340B3D01FA5F11F306F4090FD50E238070D";

describe("rate limiting over HTTP", () => {
  it("answers 429 with Retry-After: 50 and problem+json, before any model call", async () => {
    const model = textModel(["ok"]);
    const { app } = buildService(
      { RATE_LIMIT_POINTS: "3", RATE_LIMIT_ANONYMOUS_POINTS: "2" },
      { models: singleModelRegistry(model) },
    );
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

  /*
   * Found by a black-box run: an anonymous client naming a new wallet on each call was never
   * limited (each wallet had its own quota). Together, an IP's wallet-keyed requests now count
   * against one identified caller's quota.
   */
  it("a new wallet on each anonymous request does not multiply one IP's requests", async () => {
    const { app } = buildService({ RATE_LIMIT_POINTS: "4", RATE_LIMIT_ANONYMOUS_POINTS: "2" });
    const seen: number[] = [];
    for (let i = 0; i < 6; i++) {
      const wallet = `0x${(i + 1).toString(16).padStart(40, "0")}`;
      const res = await app.request("/api/chat", chatRequest({ ...USER_HI, walletAddress: wallet }));
      seen.push(res.status);
      await res.text();
    }
    expect(seen).toEqual([200, 200, 200, 200, 429, 429]);
  });

  /*
   * Found by a review: an anonymous caller naming someone else's wallet used up that wallet's
   * quota, so its owner got 429s. A named wallet's quota is now kept per client address.
   */
  it("naming another's wallet from elsewhere does not use up its owner's quota", async () => {
    const { app } = buildService({
      RATE_LIMIT_POINTS: "4",
      RATE_LIMIT_ANONYMOUS_POINTS: "2",
      TRUST_PROXY: "1",
    });
    const from = (ip: string) => chatRequest({ ...USER_HI, walletAddress: EVM_A }, { "X-Forwarded-For": ip });
    const seen: number[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await app.request("/api/chat", from("203.0.113.66"));
      seen.push(res.status);
      await res.text();
    }
    expect(seen).toEqual([200, 200, 429]);
    const owner = await app.request("/api/chat", from("198.51.100.7"));
    expect(owner.status).toBe(200);
    await owner.text();
  });

  /*
   * Found by a black-box review: behind a proxy the leftmost X-Forwarded-For entry, which the
   * client writes itself, was taken as its address, so a new one on each request was a new quota.
   */
  it.each([
    ["true", (i: number) => `10.9.9.${i}, 203.0.113.7`],
    ["2", (i: number) => `10.9.9.${i}, 203.0.113.7, 10.0.0.2`],
  ])(
    "behind TRUST_PROXY=%s, keys an anonymous caller on the address its proxies saw",
    async (hops, header) => {
      const { app } = buildService({ RATE_LIMIT_ANONYMOUS_POINTS: "2", TRUST_PROXY: hops });
      const seen: number[] = [];
      for (let i = 0; i < 4; i++) {
        const res = await app.request("/api/chat", chatRequest(USER_HI, { "X-Forwarded-For": header(i) }));
        seen.push(res.status);
        await res.text();
      }
      expect(seen).toEqual([200, 200, 429, 429]);
      // Another address the proxy saw has its own quota.
      const other = await app.request(
        "/api/chat",
        chatRequest(USER_HI, { "X-Forwarded-For": "198.51.100.4" }),
      );
      expect(other.status).toBe(200);
      await other.text();
    },
  );

  it("reads TRUST_PROXY as on, off or a number of proxies", () => {
    expect(loadConfig({ TRUST_PROXY: "true" }).trustProxy).toBe(1);
    expect(loadConfig({ TRUST_PROXY: "false" }).trustProxy).toBe(0);
    expect(loadConfig({ TRUST_PROXY: "3" }).trustProxy).toBe(3);
    expect(loadConfig({}).trustProxy).toBe(0);
    expect(() => loadConfig({ TRUST_PROXY: "11" })).toThrow(/TRUST_PROXY/);
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

  it("gives a caller with a bearer identity RATE_LIMIT_POINTS and an anonymous one RATE_LIMIT_ANONYMOUS_POINTS", async () => {
    const token = "token-for-alice-0123456789";
    const { app } = buildService({
      RATE_LIMIT_POINTS: "3",
      RATE_LIMIT_ANONYMOUS_POINTS: "1",
      AUTH_TOKENS: `alice=${token}`,
    });
    const statuses = async (headers: Record<string, string>, body: object, n: number) => {
      const seen: number[] = [];
      for (let i = 0; i < n; i++) {
        const res = await app.request("/api/chat", chatRequest(body, headers));
        seen.push(res.status);
        await res.text();
      }
      return seen;
    };
    const auth = { Authorization: `Bearer ${token}` };
    expect(await statuses(auth, USER_HI, 4)).toEqual([200, 200, 200, 429]);
    // Anonymous: keyed on the wallet it names, or on the IP without one.
    expect(await statuses({}, { ...USER_HI, walletAddress: EVM_A }, 2)).toEqual([200, 429]);
    expect(await statuses({}, USER_HI, 2)).toEqual([200, 429]);
  });

  it("never gives anonymous callers more than identified ones, and defaults to 120 and 20", () => {
    expect(loadConfig({ RATE_LIMIT_POINTS: "5" }).rateLimit).toMatchObject({ points: 5, anonymousPoints: 5 });
    expect(loadConfig({}).rateLimit).toMatchObject({
      points: 120,
      anonymousPoints: 20,
      durationS: 60,
      blockS: 50,
    });
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

  it("counts each tier against its own points, in one limiter", async () => {
    const limiter = createRateLimiter({
      points: 3,
      anonymousPoints: 1,
      durationS: 60,
      blockS: 50,
      now: () => 0,
    });
    const identified = await Promise.all([1, 2, 3, 4].map(() => limiter.consume("id:alice", "identified")));
    expect(identified.map((r) => r.ok)).toEqual([true, true, true, false]);
    expect((await limiter.consume("ip:1.2.3.4", "anonymous")).ok).toBe(true);
    expect((await limiter.consume("ip:1.2.3.4", "anonymous")).ok).toBe(false);
    // No tier named: the anonymous (tighter) one.
    expect((await limiter.consume("wallet:x")).ok).toBe(true);
    expect((await limiter.consume("wallet:x")).ok).toBe(false);
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

describe("a Redis that accepts connections and never answers (frozen)", () => {
  /*
   * Found by a black-box outage run: with the Redis server stopped (SIGSTOP), every chat waited
   * with no answer and no bound, on every instance, until it came back.
   */
  it("holds no request: each command is bounded, then this process's quota decides for a while", async () => {
    const sockets = new Set<Socket>();
    const frozen = createServer((socket) => {
      sockets.add(socket);
      socket.on("error", () => {});
    });
    await new Promise<void>((resolve) => frozen.listen(0, "127.0.0.1", resolve));
    const { port } = frozen.address() as AddressInfo;
    const limiter = createRateLimiter({
      points: 2,
      durationS: 60,
      blockS: 50,
      redisUrl: `redis://127.0.0.1:${port}`,
    });
    try {
      // Without a bound on each command the first call never ends (the test's timeout fails it).
      expect((await limiter.consume("wallet:frozen")).ok).toBe(true);
      // The next ones go straight to this process's quota (the same rule) while Redis rests.
      expect((await limiter.consume("wallet:frozen")).ok).toBe(true);
      expect((await limiter.consume("wallet:frozen")).ok).toBe(false);
    } finally {
      await limiter.close();
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => frozen.close(() => resolve()));
    }
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

  it("keeps each tier's points on Redis too", async () => {
    const prefix = `test-rl-${randomUUID()}`;
    const limiter = createRateLimiter({
      points: 3,
      anonymousPoints: 1,
      durationS: 60,
      blockS: 50,
      redisUrl: process.env.REDIS_URL,
      prefix,
    });
    try {
      const identified = [];
      for (let i = 0; i < 4; i++) identified.push((await limiter.consume("id:alice", "identified")).ok);
      expect(identified).toEqual([true, true, true, false]);
      expect((await limiter.consume("ip:1.2.3.4", "anonymous")).ok).toBe(true);
      expect((await limiter.consume("ip:1.2.3.4", "anonymous")).ok).toBe(false);
    } finally {
      await limiter.close();
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
