/**
 * `npm run check:image`: the container image, checked without Docker (docs/deploy.md, "Container
 * image"). It runs the Dockerfile's build script (scripts/build-image-tree.sh) on this checkout in
 * a temporary directory, then starts the tree as the image would, read from the Dockerfile itself
 * (scripts/dockerfile.ts): its CMD, its ENV, its USER (as root, through `setpriv` to that uid; the
 * tree stays root's, as in the image) and its HEALTHCHECK command, which must pass; then `/` must
 * serve the page and `/readyz` answer 200, and SIGTERM must stop it with exit code 0. It runs with
 * `PAYMENTS=off`, then `PAYMENTS=external` on the PostgreSQL of `DATABASE_URL` when that is set.
 * It prints the build time and the size of the tree's node_modules. Slow (a full `npm ci`): not
 * part of `npm test`; `--keep <dir>` builds into <dir> and keeps it (a later `--tree <dir>` only
 * starts it).
 */
import { execFileSync, spawn } from "node:child_process";
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type ImageSpec, readDockerfile } from "./dockerfile.js";
import { freePort } from "./lib/free-port.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const note = (line: string) => process.stdout.write(`check:image: ${line}\n`);

/** `command` as the image's user: through setpriv when we are root, as ourselves otherwise. */
function asUser(spec: ImageSpec, command: string[]): string[] {
  if (process.getuid?.() !== 0 || !spec.user) return command;
  const [uid = "", gid = uid] = spec.user.split(":");
  if (!/^\d+$/.test(uid) || !/^\d+$/.test(gid)) throw new Error(`USER ${spec.user}: give it as uid:gid`);
  return ["setpriv", `--reuid=${uid}`, `--regid=${gid}`, "--clear-groups", "--", ...command];
}

function build(tree: string): void {
  const started = performance.now();
  execFileSync("sh", [join(root, "scripts/build-image-tree.sh"), root, tree], { stdio: "inherit" });
  note(`tree built in ${((performance.now() - started) / 1000).toFixed(0)} s`);
  const kb = Number(
    execFileSync("du", ["-sk", join(tree, "node_modules")], { encoding: "utf8" }).split("\t")[0],
  );
  note(`node_modules: ${(kb / 1024).toFixed(0)} MB`);
}

async function healthy(spec: ImageSpec, tree: string, env: NodeJS.ProcessEnv): Promise<boolean> {
  const command = asUser(spec, spec.healthcheck?.command ?? []);
  return new Promise((resolve) => {
    const child = spawn(command[0] ?? "false", command.slice(1), { cwd: tree, env, stdio: "ignore" });
    child.once("exit", (code) => resolve(code === 0));
    child.once("error", () => resolve(false));
  });
}

/** Start the tree as the image runs, with `extra` environment; check it; stop it. */
async function run(
  spec: ImageSpec,
  tree: string,
  label: string,
  extra: Record<string, string>,
): Promise<void> {
  const port = await freePort();
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    ...spec.env,
    // In a container 0.0.0.0 is the container's own interface; here it would be the machine's.
    HOST: "127.0.0.1",
    PORT: String(port),
    ...extra,
  };
  const command = asUser(spec, spec.cmd ?? []);
  const started = performance.now();
  const child = spawn(command[0] ?? "false", command.slice(1), {
    cwd: tree,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (d) => {
    output += d;
  });
  child.stderr.on("data", (d) => {
    output += d;
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  try {
    let ok = false;
    for (let i = 0; i < 120 && child.exitCode === null && !ok; i++) {
      ok = await healthy(spec, tree, env);
      if (!ok) await new Promise((r) => setTimeout(r, 500));
    }
    if (!ok) throw new Error(`${label}: the HEALTHCHECK never passed:\n${output.slice(-3000)}`);
    note(`${label}: healthy after ${((performance.now() - started) / 1000).toFixed(1)} s`);
    if (/running from source|cannot build/.test(output))
      throw new Error(`${label}: the tree's dist/ was stale or missing:\n${output.slice(-2000)}`);
    const page = await fetch(`http://127.0.0.1:${port}/`);
    const html = await page.text();
    if (page.status !== 200 || !/<html/i.test(html)) throw new Error(`${label}: / answered ${page.status}`);
    const ready = await fetch(`http://127.0.0.1:${port}/readyz`);
    note(`${label}: / ${page.status} (${html.length} bytes), /readyz ${ready.status} ${await ready.text()}`);
    if (ready.status !== 200) throw new Error(`${label}: /readyz answered ${ready.status}`);
  } finally {
    if (child.exitCode === null) child.kill("SIGTERM");
  }
  const code = await exited;
  if (code !== 0) throw new Error(`${label}: exit code ${code} after SIGTERM:\n${output.slice(-2000)}`);
  note(`${label}: stopped on SIGTERM with exit code 0`);
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const spec = readDockerfile(join(root, "Dockerfile"));
  const keep = args[0] === "--keep" ? args[1] : undefined;
  const given = args[0] === "--tree" ? args[1] : undefined;
  const base = given ?? keep ?? mkdtempSync(join(tmpdir(), "image-tree-"));
  // The image's user must reach the tree (mkdtemp makes it 0700); it still owns nothing in it.
  chmodSync(base, 0o755);
  const tree = join(base, "app");
  try {
    if (!given) build(tree);
    await run(spec, tree, "PAYMENTS=off", { PAYMENTS: "off" });
    const databaseUrl = process.env.DATABASE_URL;
    if (databaseUrl) await run(spec, tree, "PAYMENTS=external + PostgreSQL", { DATABASE_URL: databaseUrl });
    else note("PAYMENTS=external skipped: DATABASE_URL is not set");
  } finally {
    if (!keep && !given) rmSync(base, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`check:image failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
