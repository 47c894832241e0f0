import { existsSync, readFileSync } from "node:fs";
import { copyFile, mkdir, readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join, relative } from "node:path";
import { PGlite } from "@electric-sql/pglite";

/**
 * A freshly initialised, empty PGlite data directory kept to copy from. PGlite's initdb costs
 * 3-6 s of CPU on a 2-core machine, a copy of its result well under 1 s, so a new data directory
 * (the first `npm start` of a clone) starts as a copy when the template exists, and by initdb as
 * before when it does not. `npm install` makes the template (postinstall, scripts/postinstall.mjs).
 * It lives under node_modules/.cache, per PGlite version, so it goes and comes with the package.
 * Migrations still run on open (src/store/migrate.ts): the template holds no table of ours.
 */
export function pgliteTemplateDir(): string | undefined {
  try {
    const entry = createRequire(import.meta.url).resolve("@electric-sql/pglite");
    const marker = `${join("node_modules", "@electric-sql", "pglite")}`;
    const at = entry.lastIndexOf(marker);
    if (at < 0) return undefined;
    const packageDir = entry.slice(0, at + marker.length);
    const { version } = JSON.parse(readFileSync(join(packageDir, "package.json"), "utf8")) as {
      version: string;
    };
    return join(entry.slice(0, at + "node_modules".length), ".cache", "x402-chat-agent", `pglite-${version}`);
  } catch {
    return undefined;
  }
}

const isDatabase = (dir: string) => existsSync(join(dir, "PG_VERSION"));

/**
 * Copy a directory tree, many files at once (about 1,000 files, 40 MB: `fs.cp` copies them one
 * after another, two to three times slower).
 */
async function copyTree(from: string, to: string): Promise<void> {
  const entries = await readdir(from, { recursive: true, withFileTypes: true });
  await mkdir(to, { recursive: true });
  for (const entry of entries) {
    if (entry.isDirectory())
      await mkdir(join(to, relative(from, join(entry.parentPath, entry.name))), { recursive: true });
  }
  const files = entries
    .filter((entry) => entry.isFile())
    .map((e) => relative(from, join(e.parentPath, e.name)));
  let next = 0;
  const worker = async () => {
    while (next < files.length) {
      const file = files[next++] as string;
      await copyFile(join(from, file), join(to, file));
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
}

/**
 * Make the template (by default where {@link pgliteTemplateDir} says) unless it exists, and its
 * image beside it (an in-memory database starts from that: {@link pgliteTemplateImage}); returns
 * the template's directory.
 */
export async function createPgliteTemplate(dir = pgliteTemplateDir()): Promise<string> {
  if (!dir) throw new Error("cannot locate @electric-sql/pglite");
  await Promise.all([createTemplateDir(dir), createTemplateImage(templateImageFile(dir))]);
  return dir;
}

async function createTemplateDir(dir: string): Promise<void> {
  if (isDatabase(dir)) return;
  const building = `${dir}.tmp-${process.pid}`;
  await rm(building, { recursive: true, force: true });
  await mkdir(building, { recursive: true });
  try {
    const db = new PGlite(building);
    await db.waitReady;
    await db.close(); // a clean shutdown: the copy starts like any stopped database
    await rename(building, dir).catch((error: unknown) => {
      if (!isDatabase(dir)) throw error; // else another install made it meanwhile
    });
  } finally {
    await rm(building, { recursive: true, force: true });
  }
}

/** The image's file: beside the template's directory, not in it (a copy of the directory must not carry it). */
const templateImageFile = (dir: string) => `${dir}.tar.gz`;

/**
 * An initialised in-memory database, dumped (PGlite's `dumpDataDir`, a gzipped tar: 4.5 MB instead
 * of 40 MB, for about 0.2 s more CPU per load), written whole or not at all.
 */
async function createTemplateImage(file: string): Promise<void> {
  if (existsSync(file)) return;
  const db = new PGlite("memory://");
  try {
    await db.waitReady; // dumpDataDir does not wait for initdb
    const image = await db.dumpDataDir("gzip");
    const writing = `${file}.tmp-${process.pid}`;
    await mkdir(dirname(file), { recursive: true });
    await writeFile(writing, Buffer.from(await image.arrayBuffer()));
    await rename(writing, file);
  } finally {
    await db.close();
  }
}

/**
 * The template's image for an in-memory database ("memory://"): loading it costs a fraction of
 * initdb's CPU (src/store/index.ts). Undefined when `npm install` made none (initdb runs instead).
 */
export async function pgliteTemplateImage(dir = pgliteTemplateDir()): Promise<Blob | undefined> {
  if (!dir) return undefined;
  try {
    return new Blob([await readFile(templateImageFile(dir))]);
  } catch {
    return undefined;
  }
}

/**
 * Prepare `dataDir` for PGlite: an existing database is left as it is; a missing or empty
 * directory becomes a copy of the template when there is one (copied aside, then renamed into
 * place, so a directory is never half a database); otherwise it is created empty and PGlite runs
 * initdb in it, as it always did.
 */
export async function prepareDataDir(dataDir: string, template = pgliteTemplateDir()): Promise<void> {
  if (isDatabase(dataDir)) return;
  const empty = !existsSync(dataDir) || (await readdir(dataDir)).length === 0;
  if (!template || !isDatabase(template) || !empty) {
    await mkdir(dataDir, { recursive: true });
    return;
  }
  await mkdir(dirname(dataDir), { recursive: true });
  const copying = `${dataDir}.copy-${process.pid}`;
  await rm(copying, { recursive: true, force: true });
  try {
    await copyTree(template, copying);
    // Replaces a missing or empty directory; fails if another process filled it meanwhile.
    await rename(copying, dataDir).catch(() => {});
  } finally {
    await rm(copying, { recursive: true, force: true });
  }
  await mkdir(dataDir, { recursive: true });
}
