/**
 * The import rules of docs/architecture.md#layering hold: each planted violation is refused by
 * Biome with this repository's own biome.json, and the allowed imports beside it pass. The files
 * are planted in a scratch copy of the layout (never in this checkout), linted by the project's
 * Biome.
 */
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "..", "..");
const biome = join(root, "node_modules", ".bin", "biome");
const run = promisify(execFile);

/** One planted file: where it sits, what it imports, and whether the rules refuse it. */
const PLANTS: Array<{ path: string; imports: string; refused: boolean; why: string }> = [
  {
    path: "src/protocol/p1.ts",
    imports: "../chains/index.js",
    refused: true,
    why: "the wire imports no chains",
  },
  { path: "src/protocol/p2.ts", imports: "viem", refused: true, why: "the wire imports no chain library" },
  { path: "src/protocol/p3.ts", imports: "hono", refused: true, why: "the wire knows no HTTP" },
  { path: "src/payments/run/p4.ts", imports: "ai", refused: true, why: "payments import no AI SDK" },
  {
    path: "src/payments/run/p5.ts",
    imports: "../../agent/index.js",
    refused: true,
    why: "payments import no agent",
  },
  { path: "src/payments/run/p6.ts", imports: "hono", refused: true, why: "the domain knows no HTTP" },
  {
    path: "src/mcp/p7.ts",
    imports: "../payments/run/index.js",
    refused: true,
    why: "MCP goes through the face",
  },
  {
    path: "src/mcp/p8.ts",
    imports: "../payments/face/index.js",
    refused: true,
    why: "MCP goes through the face",
  },
  {
    path: "src/http/p9.ts",
    imports: "../payments/ports/index.js",
    refused: true,
    why: "HTTP goes through the face",
  },
  {
    path: "src/agent/p10.ts",
    imports: "../payments/rules/index.js",
    refused: true,
    why: "the agent goes through the face",
  },
  { path: "src/mcp/ok1.ts", imports: "../payments/index.js", refused: false, why: "the face itself" },
  { path: "src/agent/ok2.ts", imports: "../payments/face.js", refused: false, why: "the face's interface" },
  {
    path: "src/store/ok3.ts",
    imports: "../payments/ports/index.js",
    refused: false,
    why: "the store implements the ports",
  },
];

describe("layering rules (biome.json)", () => {
  let scratch: string;
  let refusedFiles: Set<string>;
  beforeAll(async () => {
    scratch = mkdtempSync(join(tmpdir(), "layering-"));
    const config = JSON.parse(readFileSync(join(root, "biome.json"), "utf8"));
    config.$schema = undefined;
    config.vcs = { enabled: false };
    writeFileSync(join(scratch, "biome.json"), JSON.stringify(config));
    for (const plant of PLANTS) {
      mkdirSync(join(scratch, dirname(plant.path)), { recursive: true });
      writeFileSync(join(scratch, plant.path), `import "${plant.imports}";\n`);
    }
    const output = await run(biome, ["lint", "--max-diagnostics=200", "src"], { cwd: scratch }).then(
      (r) => r.stdout + r.stderr,
      (error: { stdout?: string; stderr?: string }) => `${error.stdout ?? ""}${error.stderr ?? ""}`,
    );
    refusedFiles = new Set(
      [...output.matchAll(/(src\/[\w/]+\.ts):\d+:\d+ lint\/style\/noRestrictedImports/g)].map(
        (m) => m[1] ?? "",
      ),
    );
  }, 60_000);
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  for (const plant of PLANTS) {
    it(`${plant.refused ? "refuses" : "allows"} ${plant.path} importing ${plant.imports}: ${plant.why}`, () => {
      expect(refusedFiles.has(plant.path)).toBe(plant.refused);
    });
  }
});
