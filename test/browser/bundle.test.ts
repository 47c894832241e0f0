/**
 * What the built page sends a browser: no script over 250 KB before gzip (the first load is split,
 * web/vite.config.ts), no script that names a source map, and the maps served only when asked for
 * (`SOURCE_MAPS=1`, src/http/static.ts).
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Hono } from "hono";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serveWeb } from "../../src/http/static.js";
// @ts-expect-error: a JavaScript build script without declarations
import { ensureWebBuilt, WEB_OUT_DIR } from "../../web/build.mjs";

describe("the built page", () => {
  beforeAll(async () => {
    await ensureWebBuilt();
  }, 180_000);

  it("has no script over 250 KB before gzip, and the page loads more than one", () => {
    const scripts = readdirSync(join(WEB_OUT_DIR, "assets")).filter((name) => name.endsWith(".js"));
    const sizes = Object.fromEntries(
      scripts.map((name) => [name, statSync(join(WEB_OUT_DIR, "assets", name)).size]),
    );
    expect(scripts.length).toBeGreaterThan(1);
    const over = Object.entries(sizes).filter(([, size]) => size > 250_000);
    expect(over).toEqual([]);
    const html = readFileSync(join(WEB_OUT_DIR, "index.html"), "utf8");
    expect(html).toMatch(/rel="modulepreload"/);
  });

  it("names no source map in its scripts", () => {
    for (const name of readdirSync(join(WEB_OUT_DIR, "assets")).filter((n) => n.endsWith(".js")))
      expect(readFileSync(join(WEB_OUT_DIR, "assets", name), "utf8")).not.toContain("sourceMappingURL");
  });
});

describe("source maps", () => {
  const dir = mkdtempSync(join(tmpdir(), "web-maps-"));
  mkdirSync(join(dir, "assets"));
  writeFileSync(
    join(dir, "index.html"),
    '<!doctype html><script type="module" src="/assets/app-1.js"></script>',
  );
  writeFileSync(join(dir, "assets", "app-1.js"), "console.log(1);");
  writeFileSync(join(dir, "assets", "app-1.js.map"), '{"version":3,"sources":["app.ts"],"mappings":""}');
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const site = (sourceMaps?: boolean) => {
    const app = new Hono();
    app.get("*", serveWeb(dir, sourceMaps === undefined ? {} : { sourceMaps }));
    app.notFound((c) => c.text("none", 404));
    return app;
  };

  it("are not served by default, and the script does not point at one", async () => {
    const previous = process.env.SOURCE_MAPS;
    delete process.env.SOURCE_MAPS;
    try {
      const app = site();
      expect((await app.request("/assets/app-1.js.map")).status).toBe(404);
      const script = await app.request("/assets/app-1.js");
      expect(script.status).toBe(200);
      expect(script.headers.get("sourcemap")).toBeNull();
    } finally {
      if (previous !== undefined) process.env.SOURCE_MAPS = previous;
    }
  });

  it("are served with SOURCE_MAPS=1, named by the script's SourceMap header", async () => {
    const previous = process.env.SOURCE_MAPS;
    process.env.SOURCE_MAPS = "1";
    try {
      const app = site();
      const script = await app.request("/assets/app-1.js");
      expect(script.headers.get("sourcemap")).toBe("/assets/app-1.js.map");
      const map = await app.request("/assets/app-1.js.map");
      expect(map.status).toBe(200);
      expect(await map.json()).toMatchObject({ version: 3 });
    } finally {
      if (previous === undefined) delete process.env.SOURCE_MAPS;
      else process.env.SOURCE_MAPS = previous;
    }
    expect((await site(false).request("/assets/app-1.js.map")).status).toBe(404);
  });
});
