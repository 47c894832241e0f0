import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readdir, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openStore } from "./index.js";
import { createPgliteTemplate, pgliteTemplateDir, pgliteTemplateImage, prepareDataDir } from "./template.js";

const USD = 1_000_000n;
const limits = { perTransaction: 10n * USD, perRequest: 10n * USD, daily: 10n * USD };

let dir: string;
let template: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "pglite-template-test-"));
  template = await createPgliteTemplate(join(dir, "template"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function reserve(dataDir: string, paymentId: string) {
  const store = await openStore({ dataDir });
  try {
    const reserved = await store.ledger.reserve({
      paymentId,
      wallet: "0xtemplate",
      scopeId: "req_1",
      service: "https://a.example/x",
      network: "eip155:31337",
      asset: "0xasset",
      payTo: "0xpayee",
      amount: USD,
      requirement: { scheme: "exact" },
      limits,
      now: new Date(),
    });
    expect(reserved.ok).toBe(true);
  } finally {
    await store.close();
  }
}

async function paymentIds(dataDir: string): Promise<(string | undefined)[]> {
  const store = await openStore({ dataDir });
  try {
    return await Promise.all(["pay_a", "pay_b"].map(async (id) => (await store.ledger.get(id))?.paymentId));
  } finally {
    await store.close();
  }
}

describe("PGlite template", () => {
  it("is kept per PGlite version under node_modules/.cache", () => {
    expect(pgliteTemplateDir()).toMatch(/node_modules\/\.cache\/x402-chat-agent\/pglite-\d+\.\d+\.\d+/);
  });

  it("is made once: a second call leaves it as it is", async () => {
    const before = await stat(join(template, "PG_VERSION"));
    expect(await createPgliteTemplate(template)).toBe(template);
    expect((await stat(join(template, "PG_VERSION"))).mtimeMs).toBe(before.mtimeMs);
    expect((await readdir(dir)).filter((name) => name.includes(".tmp-"))).toEqual([]);
  });

  it("seeds new directories, missing or empty, each its own database; the template stays empty", async () => {
    const a = join(dir, "data", "a");
    const b = join(dir, "b");
    await mkdir(b);
    await prepareDataDir(a, template);
    await prepareDataDir(b, template);
    expect(existsSync(join(a, "PG_VERSION"))).toBe(true);
    expect(existsSync(join(b, "PG_VERSION"))).toBe(true);
    await reserve(a, "pay_a");
    await reserve(b, "pay_b");
    expect(await paymentIds(a)).toEqual(["pay_a", undefined]);
    expect(await paymentIds(b)).toEqual([undefined, "pay_b"]);
    expect(existsSync(join(template, "base"))).toBe(true);
    const copy = join(dir, "c");
    await prepareDataDir(copy, template);
    expect(await paymentIds(copy)).toEqual([undefined, undefined]);
  });

  it("leaves an existing database alone", async () => {
    const dataDir = join(dir, "existing");
    await prepareDataDir(dataDir, template);
    await reserve(dataDir, "pay_a");
    await prepareDataDir(dataDir, template);
    expect(await paymentIds(dataDir)).toEqual(["pay_a", undefined]);
  });

  it("keeps an image beside it that an in-memory database starts from, each its own; made for an older template too", async () => {
    const image = await pgliteTemplateImage(template);
    expect(image?.size).toBeGreaterThan(0);
    // Beside the directory, not in it: a data directory copied from the template does not carry it.
    expect(await readdir(dir)).toContain("template.tar.gz");
    const a = new PGlite("memory://", { loadDataDir: image });
    const b = new PGlite("memory://", { loadDataDir: image });
    try {
      await a.exec("CREATE TABLE t (x int); INSERT INTO t VALUES (1)");
      expect((await a.query("SELECT x FROM t")).rows).toEqual([{ x: 1 }]);
      await expect(b.query("SELECT x FROM t")).rejects.toThrow(/does not exist/);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
    // A template made before images were: the next install adds the image, the directory stays.
    await rm(`${template}.tar.gz`);
    expect(await pgliteTemplateImage(template)).toBeUndefined();
    const before = await stat(join(template, "PG_VERSION"));
    await createPgliteTemplate(template);
    const again = await pgliteTemplateImage(template);
    expect(again?.size).toBeGreaterThan(0);
    const remade = new PGlite("memory://", { loadDataDir: again });
    try {
      expect((await remade.query("SELECT 1 AS one")).rows).toEqual([{ one: 1 }]);
    } finally {
      await remade.close();
    }
    expect((await stat(join(template, "PG_VERSION"))).mtimeMs).toBe(before.mtimeMs);
    // Two databases opened from an image and one initdb: 14 s on a busy 2-core machine, over 30 s
    // while the whole suite shares it.
  }, 120_000);

  it("copies nothing into a directory that holds other files, or without a template", async () => {
    const busy = join(dir, "busy");
    await mkdir(busy);
    await writeFile(join(busy, "notes.txt"), "mine");
    await prepareDataDir(busy, template);
    expect(await readdir(busy)).toEqual(["notes.txt"]);

    const none = join(dir, "none");
    await prepareDataDir(none, join(dir, "no-template"));
    expect(await readdir(none)).toEqual([]);
    expect((await readdir(dir)).filter((name) => name.includes(".copy-"))).toEqual([]);
  });
});
