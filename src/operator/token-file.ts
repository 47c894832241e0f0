import { randomBytes } from "node:crypto";
import { chmod, mkdir, readFile, writeFile } from "node:fs/promises";
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
  await writeFile(path, `${token}\n`, { mode: 0o600 });
  await chmod(path, 0o600); // a file left by an earlier start keeps its mode otherwise
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
