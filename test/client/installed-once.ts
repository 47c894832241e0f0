/**
 * The consumer's peers for `pack.test` (the AI SDK, React, viem and their types, at the exact
 * versions this repository pins), installed by npm once and kept in `.data/consumer-peers/<key>`,
 * the key naming those versions. A later run links that tree into its fresh project and lets npm
 * install the same specs there: npm resolves them against the tree it finds (the client's peer
 * range included) and has nothing to unpack, 2 s instead of 20-25 s. A changed pin is a new key,
 * installed fresh; a fresh clone (CI) has no `.data` and installs in full.
 */
import { createHash } from "node:crypto";
import {
  copyFileSync,
  existsSync,
  linkSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";

/** npm's hidden lockfile: it trusts a tree that matches it, written after every folder in it. */
const HIDDEN = ".package-lock.json";

/**
 * The directory of a project in which `npm` installed exactly `specs` (installing them now if no
 * earlier run did). It is only read afterwards: {@link linkInstalled} links its files.
 */
export async function installedOnce(
  root: string,
  specs: readonly string[],
  npm: (args: string[], cwd: string) => Promise<unknown>,
): Promise<string> {
  const key = createHash("sha256")
    .update(JSON.stringify([...specs].sort()))
    .digest("hex")
    .slice(0, 16);
  const parent = join(root, ".data", "consumer-peers");
  const dir = join(parent, key);
  if (existsSync(join(dir, "node_modules", HIDDEN))) return dir;
  // Installed beside, then renamed: a run cut off half way, or one beside this one, leaves no
  // half tree under the key.
  const building = `${dir}.${process.pid}.tmp`;
  rmSync(building, { recursive: true, force: true });
  mkdirSync(building, { recursive: true });
  writeFileSync(join(building, "package.json"), JSON.stringify({ name: "consumer-peers", private: true }));
  await npm(["install", ...specs], building);
  // Older versions' trees, and halves left by runs that were cut off.
  for (const old of readdirSync(parent)) {
    const pid = /\.(\d+)\.tmp$/.exec(old)?.[1];
    if (old !== key && (pid === undefined || !alive(Number(pid))))
      rmSync(join(parent, old), { recursive: true, force: true });
  }
  try {
    renameSync(building, dir);
  } catch {
    rmSync(building, { recursive: true, force: true }); // another run's tree is there already
  }
  return dir;
}

/**
 * Links the packages installed in `from` into `project`'s node_modules beside what it holds, and
 * writes the hidden lockfile of both, so that npm finds them installed as it would have left them.
 * Files are hard links (nothing writes into an installed package); copies across file systems.
 */
export function linkInstalled(from: string, project: string): void {
  const source = join(from, "node_modules");
  const target = join(project, "node_modules");
  const theirs = JSON.parse(readFileSync(join(source, HIDDEN), "utf8")) as { packages: object };
  const ours = JSON.parse(readFileSync(join(target, HIDDEN), "utf8")) as { packages: object };
  linkTree(source, target, HIDDEN);
  writeFileSync(
    join(target, HIDDEN),
    JSON.stringify({ ...ours, packages: { ...theirs.packages, ...ours.packages } }),
  );
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function linkTree(from: string, to: string, skip?: string): void {
  mkdirSync(to, { recursive: true });
  for (const entry of readdirSync(from, { withFileTypes: true })) {
    if (entry.name === skip) continue;
    const source = join(from, entry.name);
    const target = join(to, entry.name);
    if (entry.isDirectory()) linkTree(source, target);
    else if (entry.isSymbolicLink()) symlinkSync(readlinkSync(source), target);
    else
      try {
        linkSync(source, target);
      } catch {
        copyFileSync(source, target);
      }
  }
}
