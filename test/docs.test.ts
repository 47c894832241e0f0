/**
 * The docs are right the first time. The commands the README and
 * docs/ mark as runnable (a fence whose info string says `test`, e.g. ```` ```sh test finish=payment-complete
 * ````) run against the service started here (embedded devnet, offline model, PGlite in memory, a random
 * port) and must exit 0 with the finish reason they name; every relative link and #anchor resolves; every
 * configuration and terminal-chat variable the code reads is documented; the catalog example is a valid
 * CATALOG_FILE; the devnet's wallet table matches the devnet; the README names the web page's buttons as the
 * page does. Attributes a runnable block may carry: `finish=<reason>` (the `d:` line's, or the terminal
 * chat's closing line's) and `stdout=<text>` (printed).
 */
import { spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { mkdir, mkdtemp, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import type { ServerType } from "@hono/node-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bootstrap, type Running } from "../src/bootstrap.js";
import { loadConfig } from "../src/config/index.js";
import { type Devnet, startDevnet } from "../src/devnet/index.js";
import { solanaWallets } from "../src/devnet/solana/keys.js";
import { parseCatalog } from "../src/discovery/catalog.js";
import { silentLogger } from "../src/log/index.js";
import { closeServer, listen } from "../src/service.js";

const ROOT = resolve(import.meta.dirname, "..");
const DOCS = ["README.md", ...readdirSync(join(ROOT, "docs")).map((f) => `docs/${f}`)].filter((f) =>
  f.endsWith(".md"),
);
const read = (file: string) => readFileSync(join(ROOT, file), "utf8");

interface Block {
  file: string;
  line: number;
  lang: string;
  attrs: Map<string, string>;
  code: string;
}

/** Fenced blocks with their info string: language, then flags and key=value attributes. */
function blocks(file: string): Block[] {
  const out: Block[] = [];
  const lines = read(file).split("\n");
  for (let i = 0; i < lines.length; i++) {
    const open = /^(`{3,})(.*)$/.exec(lines[i] ?? "");
    if (!open) continue;
    const [lang = "", ...words] = (open[2] ?? "").trim().split(/\s+/);
    const attrs = new Map(words.map((w) => [w.split("=")[0] ?? w, w.split("=").slice(1).join("=")]));
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !(lines[i] ?? "").startsWith(open[1] ?? "```"); i++)
      body.push(lines[i] ?? "");
    out.push({ file, line: start + 1, lang, attrs, code: body.join("\n") });
  }
  return out;
}

/** The text outside fenced blocks (links and headings inside code are not links or headings). */
function prose(file: string): string {
  return read(file).replace(/^(`{3,})[^\n]*\n[\s\S]*?^\1\s*$/gm, "");
}

/** GitHub's heading anchors: lowercase, punctuation dropped, spaces to hyphens, repeats numbered. */
function anchors(file: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const match of prose(file).matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = (match[1] ?? "")
      .toLowerCase()
      .replace(/[^\p{L}\p{N} _-]/gu, "")
      .replace(/ /g, "-");
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  // An explicit anchor (`<a id="running-totals"></a>`) is a target too.
  for (const match of prose(file).matchAll(/<a id="([^"]+)"><\/a>/g)) out.add(match[1] ?? "");
  return out;
}

describe("links in README.md and docs/", () => {
  it("every relative link and #anchor resolves", () => {
    const broken: string[] = [];
    for (const file of DOCS) {
      for (const match of prose(file).matchAll(/\[[^\]]*\]\(([^)\s]+)\)/g)) {
        const target = match[1] ?? "";
        if (/^(https?|mailto):/.test(target)) continue;
        const [path = "", anchor] = target.split("#");
        const resolved = path === "" ? join(ROOT, file) : resolve(dirname(join(ROOT, file)), path);
        if (!existsSync(resolved) || relative(ROOT, resolved).startsWith("..")) {
          broken.push(`${file}: ${target} (no such file)`);
          continue;
        }
        if (anchor && resolved.endsWith(".md") && !anchors(relative(ROOT, resolved)).has(anchor))
          broken.push(`${file}: ${target} (no such heading)`);
      }
      // A file named in code (`payments.md`) must exist too: beside the doc, or from the root.
      for (const match of prose(file).matchAll(/`([\w./-]+\.md)`/g)) {
        const name = match[1] ?? "";
        if (!existsSync(resolve(dirname(join(ROOT, file)), name)) && !existsSync(join(ROOT, name)))
          broken.push(`${file}: \`${name}\` (no such file)`);
      }
    }
    expect(broken).toEqual([]);
  });
});

describe("what the docs name exists as named", () => {
  const allDocs = () => DOCS.map(read).join("\n");

  it("documents every variable the configuration and the terminal chat read", () => {
    const config = read("src/config/index.ts");
    const schema = config.slice(
      config.indexOf("const envSchema"),
      config.indexOf("});", config.indexOf("const envSchema")),
    );
    const names = new Set([...schema.matchAll(/^\s+([A-Z][A-Z0-9_]+):/gm)].map((m) => m[1] ?? ""));
    // src/cli and its folders (src/cli/operator): every source file's env reads.
    const files = readdirSync(join(ROOT, "src/cli"), { recursive: true, encoding: "utf8" });
    for (const file of files.filter((f) => f.endsWith(".ts"))) {
      for (const m of read(`src/cli/${file}`).matchAll(/\benv\.([A-Z][A-Z0-9_]+)/g)) names.add(m[1] ?? "");
    }
    expect(names.size).toBeGreaterThan(30);
    const docs = allDocs();
    expect([...names].filter((n) => !docs.includes(`\`${n}\``) && !docs.includes(`$${n}`))).toEqual([]);
  });

  it("names the web page's devnet wallet buttons as the page labels them", () => {
    const labelOf = /Use the \{option\.name\.replace\(\/\^Devnet\/, "devnet"\)\}/;
    expect(read("web/src/App.tsx")).toMatch(labelOf);
    const names = [...read("web/src/wallet/devnet.ts").matchAll(/name: "(Devnet wallet[^"]*)"/g)].map(
      (m) => `Use the ${(m[1] ?? "").replace(/^Devnet/, "devnet")}`,
    );
    expect(names).toEqual(
      expect.arrayContaining(["Use the devnet wallet (EVM)", "Use the devnet wallet (Solana)"]),
    );
    const readme = read("README.md").replace(/\s+/g, " ");
    for (const label of new Set(names)) expect(readme).toContain(`**${label}**`);
  });

  it("shows a CATALOG_FILE example that the catalog accepts", () => {
    const examples = DOCS.flatMap(blocks).filter((b) => b.lang === "json" && b.attrs.has("catalog"));
    expect(examples.length).toBeGreaterThan(0);
    for (const example of examples) {
      const parsed = parseCatalog(JSON.parse(example.code));
      expect(parsed, `${example.file}:${example.line}`).toMatchObject({ ok: true });
    }
  });
});

describe("runnable commands of the docs, against the started service", () => {
  let devnet: Devnet;
  let running: Running;
  let server: ServerType;
  let url: string;
  let dir: string;

  beforeAll(async () => {
    // A checkout as a reader has it (package.json, the sources, the builds), in a directory of its
    // own so the commands' files (.data/devnet/manifest.json, user.key) land there.
    dir = await mkdtemp(join(tmpdir(), "docs-run-"));
    for (const entry of ["package.json", "node_modules", "bin", "dist", "packages", "src", "tsconfig.json"])
      await symlink(join(ROOT, entry), join(dir, entry));
    await mkdir(join(dir, ".data/devnet"), { recursive: true });
    // The documented commands pay on EVM; the Solana node is left out to keep this quick (the wallet
    // table's Solana addresses are checked against the keys the devnet derives).
    devnet = await startDevnet({ manifestPath: join(dir, ".data/devnet/manifest.json"), solana: false });
    running = await bootstrap(
      loadConfig({
        PAYMENTS: "devnet",
        DATA_DIR: "memory://",
        MODEL_PROVIDER: "offline",
        RATE_LIMIT_POINTS: "1000",
      }),
      silentLogger,
      { devnet, devnetManifest: null },
    );
    ({ server, url } = await listen(running.service.app, { host: "127.0.0.1", port: 0 }));
  }, 120_000);

  afterAll(async () => {
    if (server) await closeServer(server);
    await running?.service.shutdown();
    await devnet?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const runnable = DOCS.flatMap(blocks).filter((b) => b.attrs.has("test"));

  it("marks the README's commands as runnable", () => {
    expect(runnable.filter((b) => b.file === "README.md").length).toBeGreaterThanOrEqual(3);
  });

  it.each(runnable.map((b) => [`${b.file}:${b.line}`, b] as const))(
    "%s runs and ends as it says",
    async (_where, block) => {
      // The docs assume the default port; the service here has a random one.
      const code = block.code.replaceAll("http://127.0.0.1:3000", url);
      const env: NodeJS.ProcessEnv = { ...process.env, X402_CHAT_URL: url, NO_COLOR: "1" };
      delete env.DEVNET_MANIFEST;
      delete env.X402_CHAT_TOKEN;
      delete env.X402_CHAT_WALLET;
      const result = await sh(code, dir, env);
      expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0);
      const stdout = block.attrs.get("stdout");
      if (stdout) expect(result.stdout).toContain(stdout);
      const finish = block.attrs.get("finish");
      if (finish) {
        // curl prints the d: line; the terminal chat closes with "(<finish reason> · n paid)".
        const dLine = result.stdout.split("\n").find((l) => l.startsWith("d:"));
        const reason = dLine
          ? (JSON.parse(dLine.slice(2)) as { finishReason: string }).finishReason
          : /\(([a-z-]+) ·/.exec(result.stderr)?.[1];
        expect(reason, `${result.stdout}\n${result.stderr}`).toBe(finish);
      }
      if (code.includes("curl")) {
        const statuses = result.stdout
          .split("\n")
          .filter((l) => l.startsWith("p:"))
          .map((l) => (JSON.parse(l.slice(2)) as { status: string }).status);
        expect(statuses).toEqual(["quoted", "reserved", "signed", "submitted", "settled"]);
      }
    },
    90_000,
  );

  it("lists every devnet wallet in docs/devnet.md with its addresses", async () => {
    const rows = new Map(
      [
        ...read("docs/devnet.md").matchAll(
          /^\| `([\w-]+)` \|.*\| `(0x[0-9a-fA-F]{40})` \(#\d+\) \| `(\w+)` \|$/gm,
        ),
      ].map((m) => [m[1], { evm: m[2], solana: m[3] }]),
    );
    for (const wallet of devnet.manifest.evm.wallets) expect(rows.get(wallet.name)?.evm).toBe(wallet.address);
    for (const wallet of await solanaWallets()) expect(rows.get(wallet.name)?.solana).toBe(wallet.address);
    expect(rows.has("user")).toBe(true);
  });
});

function sh(
  script: string,
  cwd: string,
  env: NodeJS.ProcessEnv,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done, fail) => {
    const child = spawn("bash", ["-e", "-o", "pipefail", "-c", script], {
      cwd,
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on("error", fail);
    child.on("exit", (code) => done({ code, stdout, stderr }));
  });
}
