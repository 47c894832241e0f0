/**
 * The SDK as other code gets it: `x402-chat-agent/client` and its `useChat` subpath
 * `x402-chat-agent/client/ai` through the package's `exports`, from plain Node ESM (the built
 * bundle: two entries sharing chunks) and with its type declarations.
 */
import { execFile } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
// @ts-expect-error: a JavaScript build script without declarations
import * as clientBuild from "../../scripts/build-client.mjs";

const { CLIENT_AI_OUTFILE, CLIENT_OUTFILE, ensureClientBuilt, TYPES_DIR } = clientBuild as {
  CLIENT_AI_OUTFILE: string;
  CLIENT_OUTFILE: string;
  TYPES_DIR: string;
  ensureClientBuilt(options: { types: boolean }): Promise<void>;
};

const root = join(import.meta.dirname, "..", "..");

describe("package export x402-chat-agent/client", () => {
  beforeAll(async () => {
    await ensureClientBuilt({ types: true });
  }, 120_000);

  /** The names an entry exports, imported by the package's name from plain Node ESM. */
  async function exportsOf(specifier: string): Promise<string[]> {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        `const m = await import('${specifier}'); console.log(JSON.stringify(Object.keys(m).sort()))`,
      ],
      { cwd: root },
    );
    return JSON.parse(stdout) as string[];
  }

  it("imports from plain Node ESM by the package's name: the fetch client at the root, useChat's transport at /ai", async () => {
    const names = await exportsOf("x402-chat-agent/client");
    for (const name of [
      "ChatClient",
      "ChatHttpError",
      "decodeStream",
      "signEvmApproval",
      "signSolanaApproval",
    ])
      expect(names).toContain(name);
    expect(names).not.toContain("PaymentChatTransport");
    expect(await exportsOf("x402-chat-agent/client/ai")).toContain("PaymentChatTransport");
  });

  it("declares its types; the bundle imports no npm package but @solana/kit, and carries zod's parts it uses", () => {
    const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
      exports: Record<string, { types: string; default: string }>;
    };
    const entry = pkg.exports["./client"];
    expect(entry && existsSync(join(root, entry.types))).toBe(true);
    expect(entry && join(root, entry.default)).toBe(CLIENT_OUTFILE);
    // Each entry with the chunks it shares with the other (relative imports).
    const withChunks = (file: string) => {
      const text = readFileSync(file, "utf8");
      const chunks = [...text.matchAll(/from "\.\/([^"]+\.js)"/g)].map((m) =>
        readFileSync(join(dirname(file), m[1] ?? ""), "utf8"),
      );
      return [text, ...chunks].join("\n");
    };
    for (const bundle of [withChunks(CLIENT_OUTFILE), withChunks(CLIENT_AI_OUTFILE)]) {
      // zod's parts it uses are bundled in: no import of zod, nor of any package but @solana/kit.
      expect(bundle).not.toMatch(/from "zod/);
      expect(bundle).toMatch(/"~standard"/);
      const imported = [...bundle.matchAll(/(?:from |import\()"([^".][^"]*)"/g)].map((m) => m[1]);
      expect(new Set(imported)).toEqual(new Set(["@solana/kit"]));
      // Loaded when a Solana approval is signed: an optional peer of the package.
      expect(bundle).toMatch(/import\("@solana\/kit"\)/);
      expect(bundle).not.toMatch(/from "@solana\/kit"/);
    }
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
