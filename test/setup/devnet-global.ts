/**
 * globalSetup of the `integration` project (vitest.config.ts): the devnets are booted once per run
 * (in test/setup/devnet-process.ts) and handed to the test files with `provide`; a file reads its
 * own with `useTestDevnet()` (test/setup/devnet.ts).
 *
 * One devnet per worker, not one for the whole run: fault switches and the demo wallets are state
 * of a devnet, and two files running at once must not see each other's faults. Each worker process
 * locks the devnet it uses (test/setup/devnet-claim.ts) and runs its files one after the other, so
 * a devnet serves one file at a time.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import type { TestProject } from "vitest/node";
import type { SharedDevnet } from "./devnet.js";

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const workers = Math.max(1, Number(project.config.maxWorkers) || 1);
  const child = spawn(
    process.execPath,
    ["--import", "tsx", "test/setup/devnet-process.ts", String(workers)],
    {
      cwd: project.config.root,
      stdio: ["pipe", "pipe", "inherit"],
    },
  );
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout }).once("line", resolve);
    child.once("exit", (code) => reject(new Error(`the test devnets did not start (exit ${code})`)));
  });
  project.provide("devnets", JSON.parse(line) as SharedDevnet[]);
  const locks = mkdtempSync(join(tmpdir(), "test-devnets-"));
  project.provide("devnetLocks", locks);
  return async () => {
    child.stdin.end();
    await exited;
    rmSync(locks, { recursive: true, force: true });
  };
}
