import { PGlite } from "@electric-sql/pglite";
import { drizzle } from "drizzle-orm/pglite";
import { migrate } from "../migrate.js";
import { pgliteTemplateImage } from "../template.js";

let image: Promise<Blob> | undefined;

/**
 * An image of an in-memory PGlite database with every migration applied, made once per process
 * and handed to `openStore({ dataDir: "memory://", image })` (or `BootstrapOptions.storeImage`):
 * a test that opens many stores pays for initdb and the migrations once. Opening from it still
 * runs the migrations, which find nothing left to do.
 */
export function migratedImage(): Promise<Blob> {
  image ??= (async () => {
    // From the template's image when `npm install` made it (src/store/template.ts), else by initdb.
    const client = new PGlite("memory://", { loadDataDir: await pgliteTemplateImage() });
    try {
      await migrate(drizzle(client), "public");
      return await client.dumpDataDir("none");
    } finally {
      await client.close();
    }
  })();
  return image;
}
