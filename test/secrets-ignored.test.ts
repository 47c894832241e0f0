/**
 * Local secrets never reach a commit or an image (docs/deploy.md#going-live): the environment
 * file, key files (`chat --key-file user.key`), signers files (`signer new --out signers.json`)
 * and the operator token file are in .gitignore and .dockerignore.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "..");
const patterns = (name: string) =>
  readFileSync(join(ROOT, name), "utf8")
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith("#"));

/** A .gitignore-style pattern without a slash, matched against a file's name. */
const matches = (pattern: string, name: string) =>
  new RegExp(`^${pattern.replace(/[.+^${}()|[\]\\]/g, "\\$&").replaceAll("*", "[^/]*")}$`).test(name);

const SECRETS = [
  "user.key",
  "payer.key",
  "signers.json",
  "signers-base.json",
  ".env",
  ".env.local",
  "operator-token",
];

describe.each([".gitignore", ".dockerignore"])("%s", (file) => {
  it("leaves out every local secret file", () => {
    const list = patterns(file);
    for (const name of SECRETS)
      expect(
        list.some((p) => matches(p, name)),
        name,
      ).toBe(true);
  });
});
