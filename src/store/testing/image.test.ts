import { PGlite } from "@electric-sql/pglite";
import { describe, expect, it } from "vitest";
import { openStore } from "../index.js";
import { MIGRATIONS } from "../migrations/index.js";
import { migratedImage } from "./image.js";

describe("an in-memory database opened from the migrated image", () => {
  it("starts with every migration applied, and each open is a database of its own", async () => {
    const image = await migratedImage();
    expect(await migratedImage()).toBe(image); // made once per process
    const a = new PGlite("memory://", { loadDataDir: image });
    const b = new PGlite("memory://", { loadDataDir: image });
    try {
      const applied = await a.query<{ id: number }>("SELECT id FROM public.schema_migrations ORDER BY id");
      expect(applied.rows.map((r) => r.id)).toEqual(MIGRATIONS.map((m) => m.id));
      await a.exec("CREATE TABLE public.only_in_a (x int)");
      const inB = await b.query("SELECT 1 FROM pg_tables WHERE tablename = 'only_in_a'");
      expect(inB.rows).toHaveLength(0);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it("opens as a store whose migrations find nothing left to do", async () => {
    const store = await openStore({ dataDir: "memory://", image: await migratedImage() });
    try {
      expect(await store.ledger.listByStatus(["settled"])).toEqual([]);
    } finally {
      await store.close();
    }
  });
});
