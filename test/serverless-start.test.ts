/**
 * docs/deploy.md#serverless: what the serverless handler answers when it cannot start. A
 * configuration that cannot be used is the operator's to fix, so it answers 500 `misconfigured`
 * with the reason and no Retry-After; anything else (a database not reachable yet) is 503
 * `not_ready` with Retry-After, and the next request tries the start again.
 */
import { describe, expect, it } from "vitest";
import { ConfigError } from "../src/config/index.js";
import { silentLogger } from "../src/log/index.js";
import { createFetchHandler } from "../src/serverless.js";

const request = () => new Request("https://fn.example/api/chat", { method: "POST" });

describe("a serverless start that fails", () => {
  it("answers 500 misconfigured with the reason when the configuration cannot be used", async () => {
    const fn = createFetchHandler({ env: { PAYMENTS: "devnet" }, logger: silentLogger });
    const res = await fn.fetch(request());
    expect(res.status).toBe(500);
    expect(res.headers.get("content-type")).toBe("application/problem+json");
    expect(res.headers.get("retry-after")).toBeNull();
    const body = (await res.json()) as { code: string; detail: string };
    expect(body.code).toBe("misconfigured");
    expect(body.detail).toMatch(/PAYMENTS: a serverless function cannot run the embedded devnet/);
  });

  it("names the variable loadConfig refused", async () => {
    const fn = createFetchHandler({
      env: { PAYMENTS: "off", AUTH_TOKENS: "alice=short" },
      logger: silentLogger,
    });
    const res = await fn.fetch(request());
    expect(res.status).toBe(500);
    const body = (await res.json()) as { code: string; detail: string };
    expect(body.code).toBe("misconfigured");
    expect(body.detail).toMatch(/AUTH_TOKENS/);
    // The value refused is not echoed.
    expect(body.detail).not.toContain("short");
  });

  it("answers 500 misconfigured when the composition root refuses the configuration (a bad SIGNERS_FILE)", async () => {
    const fn = createFetchHandler({
      env: { PAYMENTS: "off" },
      logger: silentLogger,
      start: () => Promise.reject(new ConfigError("SIGNERS_FILE: /run/secrets/signers is not readable JSON")),
    });
    const res = await fn.fetch(request());
    expect(res.status).toBe(500);
    expect(((await res.json()) as { detail: string }).detail).toMatch(/SIGNERS_FILE/);
  });

  it("answers 503 not_ready with Retry-After for anything else, and tries again on the next request", async () => {
    let starts = 0;
    const fn = createFetchHandler({
      env: { PAYMENTS: "off" },
      logger: silentLogger,
      start: () => {
        starts += 1;
        return Promise.reject(new Error("connect ECONNREFUSED 10.0.0.5:5432"));
      },
    });
    const res = await fn.fetch(request());
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("5");
    const body = (await res.json()) as { code: string; detail: string };
    expect(body.code).toBe("not_ready");
    // The cause stays in the log: a driver's message may name hosts and users.
    expect(body.detail).not.toMatch(/ECONNREFUSED/);
    await fn.fetch(request());
    expect(starts).toBe(2);
  });
});
