import { describe, expect, it, vi } from "vitest";

/** Every image the store asked the template for, as it came back. */
const asked = vi.hoisted(() => ({ images: [] as (Blob | undefined)[] }));
vi.mock("./template.js", async (importOriginal) => {
  const actual = await importOriginal<typeof import("./template.js")>();
  return {
    ...actual,
    pgliteTemplateImage: async (...args: Parameters<typeof actual.pgliteTemplateImage>) => {
      const image = await actual.pgliteTemplateImage(...args);
      asked.images.push(image);
      return image;
    },
  };
});

// Test files share their worker's modules (vitest.config.ts, `isolate: false`): one that ran
// before may have loaded the store already, without this mock. Load it again, mocked.
vi.resetModules();
const { openStore } = await import("./index.js");

describe("an in-memory store (DATA_DIR=memory://)", () => {
  it("starts from the image `npm install` left beside the template, not from initdb", async () => {
    asked.images.length = 0;
    const store = await openStore({ dataDir: "memory://" });
    try {
      expect(asked.images).toHaveLength(1);
      // postinstall (scripts/postinstall.mjs) makes it; without it every start runs initdb.
      expect(asked.images[0]?.size).toBeGreaterThan(1_000_000);
      expect(await store.ledger.get("pay_none")).toBeUndefined();
    } finally {
      await store.close();
    }
  });

  it("starts from the caller's image when given one, without reading the template's", async () => {
    const image = asked.images[0];
    if (!image) throw new Error("the test above found no image");
    asked.images.length = 0;
    const store = await openStore({ dataDir: "memory://", image });
    try {
      expect(asked.images).toHaveLength(0);
      expect(await store.ledger.get("pay_none")).toBeUndefined();
    } finally {
      await store.close();
    }
  });
});
