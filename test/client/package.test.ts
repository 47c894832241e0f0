/**
 * The SDK as other code gets it: `x402-chat-agent/client` through the package's `exports`, from
 * plain Node ESM (the built bundle) and with its type declarations.
 */
import { execFile } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
// @ts-expect-error: a JavaScript build script without declarations
import { CLIENT_OUTFILE, ensureClientBuilt, TYPES_DIR } from "../../scripts/build-client.mjs";

const root = join(import.meta.dirname, "..", "..");

describe("package export x402-chat-agent/client", () => {
  beforeAll(async () => {
    await ensureClientBuilt({ types: true });
  }, 120_000);

  it("imports from plain Node ESM by the package's name", async () => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        "const m = await import('x402-chat-agent/client'); console.log(JSON.stringify(Object.keys(m).sort()))",
      ],
      { cwd: root },
    );
    const names = JSON.parse(stdout) as string[];
    for (const name of [
      "ChatClient",
      "ChatHttpError",
      "PaymentChatTransport",
      "decodeStream",
      "signEvmApproval",
      "signSolanaApproval",
    ])
      expect(names).toContain(name);
  });

  it("declares its types; the bundle imports no npm package but @solana/kit, and carries zod's parts it uses", () => {
    const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
      exports: Record<string, { types: string; default: string }>;
    };
    const entry = pkg.exports["./client"];
    expect(entry && existsSync(join(root, entry.types))).toBe(true);
    expect(entry && join(root, entry.default)).toBe(CLIENT_OUTFILE);
    const bundle = readFileSync(CLIENT_OUTFILE, "utf8");
    // zod's parts it uses are bundled in: no import of zod, nor of any package but @solana/kit.
    expect(bundle).not.toMatch(/from "zod/);
    expect(bundle).toMatch(/"~standard"/);
    const imported = [...bundle.matchAll(/(?:from |import\()"([^".][^"]*)"/g)].map((m) => m[1]);
    expect(new Set(imported)).toEqual(new Set(["@solana/kit"]));
    // Loaded when a Solana approval is signed: an optional peer of the package.
    expect(bundle).toMatch(/import\("@solana\/kit"\)/);
    expect(bundle).not.toMatch(/from "@solana\/kit"/);
  });

  it("its declarations name no package but ai (its optional peer): no zod type", () => {
    const named = new Set<string>();
    for (const file of readdirSync(TYPES_DIR, { recursive: true, encoding: "utf8" })) {
      if (!file.endsWith(".d.ts")) continue;
      const text = readFileSync(join(TYPES_DIR, file), "utf8");
      for (const m of text.matchAll(/(?:from |import\()\s*"([^".][^"]*)"/g)) named.add(m[1] ?? "");
    }
    expect([...named]).toEqual(["ai"]);
  });
});
