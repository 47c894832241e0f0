/**
 * The client package as another project gets it: `npm pack` of packages/client, the tarball
 * installed into a fresh project outside this repository (its peers from the npm cache): first with
 * no `ai`, where a fetch-only consumer (consumer/fetch-only.ts) type-checks; then with the current
 * AI SDK (`ai` 7, `@ai-sdk/react` 4: no peer warning), where a `useChat` page (consumer/page.ts) and
 * a consumer (consumer/consumer.ts) type-check under `strict` with `moduleResolution` `bundler`
 * and `node16` (declarations included: `skipLibCheck: false`), then run against the service and the
 * local devnet: the fetch client paying, the approval round trip in the user's wallet, and the same
 * through the `useChat` transport (the AI SDK's own chat driver; the page in Chromium is
 * test/browser/web.test.ts). Installs from the npm cache; the peers' tree is unpacked once and
 * kept, keyed by their versions (installed-once.ts), so a later run links it in and npm finds it
 * installed: 2 s instead of 20-25 s.
 */
import { execFile } from "node:child_process";
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
// @ts-expect-error: a JavaScript build script without declarations
import { ensureClientBuilt } from "../../scripts/build-client.mjs";
import type { Devnet } from "../../src/devnet/index.js";
import { walletAddress } from "../../src/devnet/testing/index.js";
import { type Booted, boot, startTestDevnet } from "../payments/harness.js";
import { installedOnce, linkInstalled } from "./installed-once.js";
import { type Served, serve } from "./support.js";

const run = promisify(execFile);
const root = join(import.meta.dirname, "..", "..");
/** TypeScript 7 (the native compiler), the repository's own `tsc` (package.json: `typescript-native`). */
const tsc = join(root, "node_modules", "typescript-native", "bin", "tsc");
const work = mkdtempSync(join(tmpdir(), "client-consumer-"));
const project = join(work, "consumer");
const rootPackage = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
  devDependencies: Record<string, string>;
};
/** The versions this repository pins, so the consumer's peers come from the npm cache. */
const pinned = (name: string) => `${name}@${rootPackage.devDependencies[name]}`;
const npm = (args: string[], cwd: string) =>
  run("npm", [...args, "--prefer-offline", "--no-audit", "--no-fund", "--ignore-scripts"], {
    cwd,
    maxBuffer: 16 * 1024 * 1024,
  });

let tarball = "";
let devnet: Devnet | undefined;
let booted: Booted | undefined;
let served: Served | undefined;

async function sizeMb(dir: string): Promise<number> {
  const { stdout } = await run("du", ["-sk", dir]);
  return Number.parseInt(stdout, 10) / 1024;
}

beforeAll(async () => {
  await ensureClientBuilt({ types: true });
  const packed = await run("npm", ["pack", "--json", "--pack-destination", work], {
    cwd: join(root, "packages", "client"),
  });
  const [info] = JSON.parse(packed.stdout) as Array<{ filename: string; files: Array<{ path: string }> }>;
  tarball = join(work, info?.filename ?? "");
  writeFileSync(join(work, "files.json"), JSON.stringify(info?.files.map((f) => f.path)));
  // A fresh project: its own package.json, nothing of this repository but the tarball.
  rmSync(project, { recursive: true, force: true });
  await run("mkdir", ["-p", project]);
  writeFileSync(
    join(project, "package.json"),
    JSON.stringify({ name: "consumer", private: true, type: "module" }),
  );
}, 300_000);

afterAll(async () => {
  await served?.close();
  await devnet?.stop();
  rmSync(work, { recursive: true, force: true });
});

describe("the packed client package", () => {
  it("holds the bundle and its declarations, nothing of the server", () => {
    const files = JSON.parse(readFileSync(join(work, "files.json"), "utf8")) as string[];
    expect(files).toContain("dist/index.js");
    expect(files).toContain("dist/types/client/index.d.ts");
    expect(files).toContain("dist/ai.js");
    expect(files).toContain("dist/types/client/ai.d.ts");
    expect(files).toContain("package.json");
    expect(files.filter((f) => !/^(dist\/|package\.json$|README\.md$)/.test(f))).toEqual([]);
    expect(files.some((f) => /stamp|\/(payments|store|devnet|http|agent)\//.test(f))).toBe(false);
  });

  it("installs into a fresh project under 5 MB with everything it pulls: no zod, no other package", async () => {
    await npm(["install", tarball], project);
    const installed = await sizeMb(join(project, "node_modules"));
    const own = await sizeMb(join(project, "node_modules", "@x402-chat-agent", "client"));
    const { stdout } = await run("npm", ["ls", "--all", "--parseable"], { cwd: project });
    const packages = stdout.trim().split("\n").slice(1);
    console.log(
      `client package: ${own.toFixed(2)} MB; installed with all it pulls: ${installed.toFixed(2)} MB, ${packages.length} package(s)`,
    );
    // Its required dependencies and peers: none (zod's parts it uses are in its bundle).
    expect(packages.map((p) => p.slice(p.lastIndexOf("node_modules/") + 13))).toEqual([
      "@x402-chat-agent/client",
    ]);
    // 0.52 MB with tabs (the useChat transport's tab, the Solana funding check) and their source maps.
    expect(own).toBeLessThan(0.6);
    expect(installed).toBeLessThan(5);
    // Plain Node imports it by name, with no peer installed.
    const { stdout: names } = await run(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        "const m = await import('@x402-chat-agent/client'); console.log(typeof m.ChatClient, typeof m.signSolanaApproval)",
      ],
      { cwd: project },
    );
    expect(names.trim()).toBe("function function");
  }, 300_000);

  it("type-checks a fetch-only consumer with no ai installed, declarations included", async () => {
    copyFileSync(join(import.meta.dirname, "consumer", "fetch-only.ts"), join(project, "fetch-only.ts"));
    const compilerOptions = {
      strict: true,
      skipLibCheck: false,
      noEmit: true,
      target: "ES2022",
      lib: ["ES2022", "DOM", "DOM.Iterable"],
      types: [],
      module: "ESNext",
      moduleResolution: "bundler",
    };
    writeFileSync(
      join(project, "tsconfig.fetch.json"),
      JSON.stringify({ compilerOptions, files: ["fetch-only.ts"] }),
    );
    const result = await run(process.execPath, [tsc, "-p", "tsconfig.fetch.json"], { cwd: project }).then(
      () => "",
      (error: { stdout?: string }) => error.stdout ?? String(error),
    );
    expect(result).toBe("");
  }, 300_000);

  it("type-checks a strict consumer and a useChat page under moduleResolution bundler and node16, declarations included", async () => {
    // What a useChat program has: the current AI SDK and React (whose declarations need Node's
    // types), and viem; the package's peer range takes them with no warning. npm resolves them
    // against the project's tree, the client included; their files come from an earlier run's
    // install of the same versions, when there is one.
    const peers = ["ai", "@ai-sdk/react", "react", "@types/react", "viem", "@types/node"].map(pinned);
    linkInstalled(await installedOnce(root, peers, npm), project);
    const installed = await npm(["install", ...peers], project);
    expect(`${installed.stdout}\n${installed.stderr}`).not.toMatch(/peer|ERESOLVE|overriding/i);
    // The AI SDK's own zod, once: the package adds no copy of its own to the tree.
    const { stdout: tree } = await run("npm", ["ls", "--all", "--parseable"], { cwd: project });
    expect(tree.split("\n").filter((p) => p.endsWith("/zod"))).toHaveLength(1);
    for (const file of ["consumer.ts", "page.ts"])
      copyFileSync(join(import.meta.dirname, "consumer", file), join(project, file));
    const base = {
      strict: true,
      noUncheckedIndexedAccess: true,
      skipLibCheck: false,
      target: "ES2022",
      lib: ["ES2022", "DOM", "DOM.Iterable"],
      types: ["node"],
      outDir: "out",
    };
    const configs = {
      "tsconfig.bundler.json": { ...base, module: "ESNext", moduleResolution: "bundler", noEmit: true },
      "tsconfig.node16.json": { ...base, module: "node16", moduleResolution: "node16" },
    };
    // The two type-checks are independent (one process each): run side by side, not one after the other.
    const results = await Promise.all(
      Object.entries(configs).map(async ([name, compilerOptions]) => {
        writeFileSync(
          join(project, name),
          JSON.stringify({ compilerOptions, files: ["consumer.ts", "page.ts"] }),
        );
        const result = await run(process.execPath, [tsc, "-p", name], { cwd: project }).then(
          () => "",
          (error: { stdout?: string }) => error.stdout ?? String(error),
        );
        return [name, result] as const;
      }),
    );
    for (const [name, result] of results) {
      // The AI SDK's own declarations name `json-schema`, whose types it leaves to the program
      // (@types/json-schema): its errors are its own. Any other, ours or the consumer's, fails.
      const errors = result
        .split("\n")
        .filter((line) => /error TS\d+/.test(line) && !/^node_modules\/(ai|@ai-sdk\/[^/]+)\//.test(line));
      expect(errors, `${name}\n${result}`).toEqual([]);
    }
  }, 600_000);

  it("runs against the service: pays by fetch, approves in the user's wallet, and through useChat", async () => {
    devnet = await startTestDevnet();
    booted = await boot(devnet, { store: "pglite" });
    served = await serve(booted.running);
    const key = devnet.secrets.evm.user;
    const args = [
      served.url,
      devnet.manifest.devToken,
      walletAddress(devnet, "evm", "payer"),
      walletAddress(devnet, "evm", "user"),
      key ?? "",
    ];
    const { stdout } = await run(
      process.execPath,
      [join(project, "out", "consumer.js"), JSON.stringify(args)],
      {
        cwd: project,
      },
    );
    const result = JSON.parse(stdout) as Record<string, Record<string, unknown>>;
    expect(result.fetch).toMatchObject({
      finishReason: "payment-complete",
      transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/),
      text: true,
    });
    expect(result.fetch?.statuses).toContain("settled");
    expect(result.approval).toMatchObject({
      first: "approval-required",
      second: "payment-complete",
      transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/),
    });
    expect(result.useChat).toEqual({
      asked: "approval-required",
      cardStatus: "awaiting_approval",
      sameMessage: true,
      settled: "settled",
      finish: "payment-complete",
    });
    expect(result.refused).toMatchObject({ status: 400 });
  }, 300_000);
});
