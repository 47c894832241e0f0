import { lstat, mkdtemp, readFile, rm, stat, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { operatorTokenFor, operatorTokenPath, readOperatorToken } from "./token-file.js";

/** The operator token's file (docs/deploy.md#operating-it): owner-only, never written through a link. */

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});
const tempDir = async () => {
  const dir = await mkdtemp(join(tmpdir(), "x402-token-"));
  dirs.push(dir);
  return dir;
};

describe.skipIf(process.platform === "win32")("the operator token file", () => {
  it("is written owner-only, even over a world-readable one an earlier start left", async () => {
    const dir = await tempDir();
    await writeFile(operatorTokenPath(dir), "old\n", { mode: 0o644 });
    const token = await operatorTokenFor(undefined, dir);
    expect((await stat(operatorTokenPath(dir))).mode & 0o777).toBe(0o600);
    expect(await readOperatorToken(dir)).toBe(token);
  });

  it("replaces a symlink in its place rather than writing the token to the link's target", async () => {
    const dir = await tempDir();
    const target = join(await tempDir(), "public.txt");
    await writeFile(target, "", { mode: 0o644 });
    await symlink(target, operatorTokenPath(dir));
    const token = await operatorTokenFor(undefined, dir);
    expect(await readFile(target, "utf8")).toBe("");
    expect((await lstat(operatorTokenPath(dir))).isSymbolicLink()).toBe(false);
    expect(await readOperatorToken(dir)).toBe(token);
  });

  it("OPERATOR_TOKEN wins and nothing is written", async () => {
    const dir = await tempDir();
    expect(await operatorTokenFor("t".repeat(32), dir)).toBe("t".repeat(32));
    expect(await readOperatorToken(dir)).toBeUndefined();
  });
});
