/**
 * The production install (docs/deploy.md) holds `dependencies` only, and the service it runs is
 * dist/main.js: so every package the bundle still imports at run time must be a dependency (or
 * one of the devnet's, loaded only with PAYMENTS=devnet, which then says they are missing), and
 * nothing else may be one (a dependency the bundle holds inside only makes the install bigger).
 */
import { readFileSync } from "node:fs";
import { builtinModules } from "node:module";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
// @ts-expect-error: a JavaScript build script without declarations
import { ensureBuilt, OUTFILE } from "../../scripts/build.mjs";

const root = join(import.meta.dirname, "..", "..");
/** Loaded by the embedded devnet only (src/devnet), absent from a production install. */
const DEVNET_ONLY = new Set(["hardhat", "solc", "x402-hono"]);
// LiteSVM's platform package is required by a computed name (src/devnet/solana/litesvm.ts).
/** Optional native helpers that `ws` tries and does without. */
const OPTIONAL = new Set(["bufferutil", "utf-8-validate"]);

const packageOf = (specifier: string) =>
  specifier.startsWith("@") ? specifier.split("/").slice(0, 2).join("/") : (specifier.split("/")[0] ?? "");

describe("production dependencies", () => {
  let imported: Set<string>;
  beforeAll(async () => {
    await ensureBuilt();
    const bundle = readFileSync(OUTFILE, "utf8");
    const builtins = new Set(builtinModules);
    // `from "x"`, `import("x")`, `require("x")` (not in a string: code that ajv
    // generates, never run here), `require.resolve("x")`.
    imported = new Set(
      [
        ...bundle.matchAll(
          /(?:\bfrom\s*|\bimport\(\s*|(?<![`'.\w])require\(\s*|(?:require|\))\.resolve\(\s*)"((?:@[\w.-]+\/)?[\w.-]+)(?:\/[^"]*)?"/g,
        ),
      ]
        .map((m) => packageOf(m[1] ?? ""))
        .filter((name) => name && !name.startsWith("node:") && !builtins.has(name)),
    );
  }, 180_000);

  it("are exactly what dist/main.js loads at run time", () => {
    const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
      dependencies: Record<string, string>;
    };
    const dependencies = Object.keys(pkg.dependencies).sort();
    const needed = [...imported].filter((name) => !DEVNET_ONLY.has(name) && !OPTIONAL.has(name)).sort();
    expect(needed).toEqual(dependencies);
  });
});
