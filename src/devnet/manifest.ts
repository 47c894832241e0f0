import { mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import type { DevnetManifest } from "./types.js";

/** Default manifest location, relative to the working directory. */
export const DEFAULT_MANIFEST_PATH = ".data/devnet/manifest.json";

/**
 * Resolves where the manifest goes: the option wins (`null` = nowhere), then `$DEVNET_MANIFEST`,
 * then {@link DEFAULT_MANIFEST_PATH}.
 */
export function resolveManifestPath(option: string | null | undefined, env = process.env): string | null {
  if (option === null) return null;
  return resolve(option ?? env.DEVNET_MANIFEST ?? DEFAULT_MANIFEST_PATH);
}

/** Writes atomically (temp file + rename) so a reader never sees half a manifest. */
export async function writeManifest(path: string, manifest: DevnetManifest): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const temp = `${path}.${process.pid}.tmp`;
  await writeFile(temp, `${JSON.stringify(manifest, null, 2)}\n`, { mode: 0o600 });
  await rename(temp, path);
}

/**
 * Deletes the manifest on stop so a stale file never points at dead ports, but only if it is
 * still ours: another devnet may have written the same path since.
 */
export async function removeManifest(path: string, manifest: DevnetManifest): Promise<void> {
  try {
    const onDisk = JSON.parse(await readFile(path, "utf8")) as Partial<DevnetManifest>;
    if (onDisk.devToken === manifest.devToken && onDisk.startedAt === manifest.startedAt)
      await rm(path, { force: true });
  } catch {
    // Already gone or unreadable: nothing of ours to remove.
  }
}
