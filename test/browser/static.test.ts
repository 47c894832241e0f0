/**
 * The web page's HTTP side, in process: what `/` and the assets answer (types, caching, gzip,
 * 304s, security headers), that other routes are untouched, and that the devnet wallet route exists
 * only while the embedded devnet runs. The page itself is tested in Chromium (web.test.ts).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { Hono } from "hono";
import { afterAll, describe, expect, it } from "vitest";
import { bootstrap } from "../../src/bootstrap.js";
import { loadConfig } from "../../src/config/index.js";
import { DEVNET_WALLETS_PATH } from "../../src/http/devnet-wallet.js";
import { serveWeb } from "../../src/http/static.js";
import { silentLogger } from "../../src/log/index.js";
import { createService } from "../../src/service.js";
import { testConfig } from "../helpers.js";

const dir = mkdtempSync(join(tmpdir(), "web-static-"));
mkdirSync(join(dir, "assets"));
const INDEX = '<!doctype html><script type="module" src="/assets/index-abc123.js"></script>';
const SCRIPT = `console.log(${JSON.stringify("x".repeat(4000))});`;
writeFileSync(join(dir, "index.html"), INDEX);
writeFileSync(join(dir, "assets", "index-abc123.js"), SCRIPT);
writeFileSync(join(dir, ".stamp.json"), "{}");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function site(webDir: string): Hono {
  const app = new Hono();
  app.get("*", serveWeb(webDir));
  app.get("/api/other", (c) => c.text("other"));
  app.notFound((c) => c.text("none", 404));
  return app;
}

describe("serveWeb", () => {
  const app = site(dir);

  it("serves index.html at / with no-cache, an ETag and the page's security headers", async () => {
    const response = await app.request("/");
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(response.headers.get("cache-control")).toBe("no-cache");
    expect(response.headers.get("etag")).toMatch(/^".+"$/);
    expect(response.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    expect(response.headers.get("content-security-policy")).toContain("script-src 'self'");
    expect(response.headers.get("x-frame-options")).toBe("DENY");
    expect(await response.text()).toBe(INDEX);
    const again = await app.request("/", {
      headers: { "If-None-Match": response.headers.get("etag") ?? "" },
    });
    expect(again.status).toBe(304);
  });

  it("serves hashed assets as immutable for a year, gzipped when accepted", async () => {
    const plain = await app.request("/assets/index-abc123.js");
    expect(plain.status).toBe(200);
    expect(plain.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect(plain.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    expect(plain.headers.get("content-encoding")).toBeNull();
    expect(await plain.text()).toBe(SCRIPT);
    const zipped = await app.request("/assets/index-abc123.js", {
      headers: { "Accept-Encoding": "gzip, br" },
    });
    expect(zipped.headers.get("content-encoding")).toBe("gzip");
    expect(zipped.headers.get("vary")).toBe("Accept-Encoding");
    expect(gunzipSync(Buffer.from(await zipped.arrayBuffer())).toString()).toBe(SCRIPT);
  });

  it("passes every other path on: other routes, the 404, dotfiles, paths outside the folder", async () => {
    expect(await (await app.request("/api/other")).text()).toBe("other");
    for (const path of [
      "/nope.js",
      "/assets/missing.js",
      "/.stamp.json",
      "/../package.json",
      "/assets/../../x",
    ]) {
      const response = await app.request(path);
      expect(response.status, path).toBe(404);
      expect(await response.text(), path).toBe("none");
    }
  });

  it("serves a rebuilt index.html at once", async () => {
    const other = mkdtempSync(join(tmpdir(), "web-static-"));
    try {
      writeFileSync(join(other, "index.html"), "one");
      const served = site(other);
      expect(await (await served.request("/")).text()).toBe("one");
      writeFileSync(join(other, "index.html"), "two");
      expect(await (await served.request("/")).text()).toBe("two");
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  });

  it("says how to build the page when it was never built", async () => {
    const response = await site(join(dir, "missing")).request("/");
    expect(response.status).toBe(404);
    expect(response.headers.get("content-type")).toMatch(/^text\/html/);
    expect(await response.text()).toContain("npm run build:web");
  });
});

describe("the service's routes", () => {
  it("mounts the page at / beside the API, and no devnet wallet route without the embedded devnet", async () => {
    const service = createService(testConfig({ PAYMENTS: "off" }), silentLogger);
    const page = await service.app.request("/");
    expect(page.headers.get("content-type")).toMatch(/^text\/html/);
    expect((await service.app.request("/healthz")).status).toBe(200);
    expect((await service.app.request("/api/chat")).status).toBe(405);
    const wallets = await service.app.request(DEVNET_WALLETS_PATH);
    expect(wallets.status).toBe(404);
    expect(wallets.headers.get("content-type")).toMatch(/problem\+json/);
  });

  it("has no devnet wallet route when paying on configured networks", async () => {
    const running = await bootstrap(
      loadConfig({ PAYMENTS: "external", DATA_DIR: "memory://", RATE_LIMIT_POINTS: "1000" }),
      silentLogger,
    );
    try {
      expect((await running.service.app.request(DEVNET_WALLETS_PATH)).status).toBe(404);
    } finally {
      await running.service.shutdown();
    }
  });
});
