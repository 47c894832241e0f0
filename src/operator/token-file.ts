import { randomBytes } from "node:crypto";
import { mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";

/**
 * The operator token when OPERATOR_TOKEN is unset (docs/deploy.md#operating-it): made at each start
 * and written to `<DATA_DIR>/operator-token`, readable by its owner only, where the CLI finds it.
 * With DATA_DIR=memory:// it is kept in memory only (tests).
 */

export const OPERATOR_TOKEN_FILE = "operator-token";

export function operatorTokenPath(dataDir: string): string {
  return join(dataDir, OPERATOR_TOKEN_FILE);
}

/** OPERATOR_TOKEN, or a new token written to the data dir's file. */
export async function operatorTokenFor(configured: string | undefined, dataDir: string): Promise<string> {
  if (configured) return configured;
  const token = randomBytes(32).toString("base64url");
  if (dataDir === "memory://") return token;
  await mkdir(dataDir, { recursive: true });
  const path = operatorTokenPath(dataDir);
  // A new file, owner-only from its first byte ("wx": never an existing file or a link's target),
  // renamed over the old one: a file left by an earlier start with a wider mode, or a symlink put
  // in its place, never receives the token.
  const fresh = `${path}.${randomBytes(6).toString("hex")}.tmp`;
  try {
    await writeFile(fresh, `${token}\n`, { mode: 0o600, flag: "wx" });
    await rename(fresh, path);
  } catch (error) {
    await rm(fresh, { force: true });
    throw error;
  }
  return token;
}

/** The token a running service wrote, if any. */
export async function readOperatorToken(dataDir: string): Promise<string | undefined> {
  try {
    const text = (await readFile(operatorTokenPath(dataDir), "utf8")).trim();
    return text.length >= 32 ? text : undefined;
  } catch {
    return undefined;
  }
}
