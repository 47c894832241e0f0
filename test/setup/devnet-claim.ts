/**
 * Which of the run's devnets this worker process uses: the first one whose lock file it can
 * create (`wx`, so exactly one process holds each), kept until the process exits. A worker runs
 * its files one after the other, so a devnet serves one file at a time.
 *
 * Not `VITEST_POOL_ID`: it was seen to give two integration workers of one `npm test` run the same
 * id, so two files shared a devnet, and one file's fault reset released the other's held
 * settlement and its payments moved the other's merchant balance (docs/testing.md#the-shared-devnets;
 * the story: bench/results/testing-history.md). A lock held by a process that is gone (killed) is taken over.
 */
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { processAlive } from "../helpers.js";

/** How long a worker waits for a devnet: a worker that ended may still be exiting. */
const CLAIM_DEADLINE_MS = 30_000;

let claimed: number | undefined;

export function claimDevnet(count: number, lockDir: string): number {
  if (claimed !== undefined) return claimed;
  const until = Date.now() + CLAIM_DEADLINE_MS;
  for (;;) {
    for (let i = 0; i < count; i++) {
      if (tryLock(join(lockDir, `${i}.lock`))) {
        claimed = i;
        return i;
      }
    }
    if (Date.now() > until)
      throw new Error(
        `all ${count} test devnets are held by other live processes after ${CLAIM_DEADLINE_MS} ms`,
      );
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
  }
}

function tryLock(file: string): boolean {
  try {
    writeFileSync(file, String(process.pid), { flag: "wx" });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    const holder = holderOf(file);
    if (holder === undefined || holder === process.pid || processAlive(holder)) return false;
    // The holder is gone: free the lock if it is still that holder's, then race for it anew.
    if (holderOf(file) === holder) rmSync(file, { force: true });
    return false;
  }
  process.once("exit", () => rmSync(file, { force: true }));
  return true;
}

function holderOf(file: string): number | undefined {
  try {
    const pid = Number(readFileSync(file, "utf8"));
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}
