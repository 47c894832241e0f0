import { randomUUID } from "node:crypto";
import { link, readFile, rename, stat, unlink, utimes, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import { resolve } from "node:path";

/**
 * One process at a time in an embedded database's directory. PGlite takes no lock of its own: a
 * second process that opens the same directory reads and writes its own copy of the pages, so two
 * services (or the operator CLI beside a running service) on one DATA_DIR would each check the
 * limits against half the payments and overwrite each other's records. `holdDataDir` refuses that.
 *
 * The holder writes `<dir>.lock` (its pid, host and start) and touches it every
 * {@link HEARTBEAT_MS} while it holds it. A lock is in force while its process lives (same host:
 * asked of the kernel, so a process killed with SIGKILL frees it at once) or, from another host (a
 * volume shared by two containers), while it was touched in the last {@link STALE_MS}.
 */

/** How often a holder touches its lock file. */
export const HEARTBEAT_MS = 2_000;
/** A lock from another host untouched for this long is left behind by a process that is gone. */
export const STALE_MS = 15_000;

/** Directories this process holds, and as whom (a second open in the same process is refused too). */
const held = new Map<string, Holder>();

interface Holder {
  pid: number;
  host: string;
  since: string;
}

/** Another process holds the directory: its words say which and what to do. */
export class DataDirInUse extends Error {
  override readonly name = "DataDirInUse";
  constructor(
    readonly dir: string,
    readonly holder: Holder | undefined,
  ) {
    const who = holder
      ? `process ${holder.pid} on ${holder.host}, since ${holder.since}`
      : "another process (its lock file is being written)";
    super(
      `The embedded database in ${dir} is in use by ${who}. PGlite can be opened by one process at a time: stop that process, set another DATA_DIR, or use PostgreSQL (DATABASE_URL) for several instances.`,
    );
  }
}

/** Hold `dir` until `release()`; throws {@link DataDirInUse} while another process holds it. */
export async function holdDataDir(
  path: string,
  now: () => number = Date.now,
): Promise<{ release(): Promise<void> }> {
  const dir = resolve(path);
  const file = `${dir}.lock`;
  const mine: Holder = { pid: process.pid, host: hostname(), since: new Date(now()).toISOString() };
  const text = JSON.stringify(mine);
  for (let attempt = 0; ; attempt++) {
    const here = held.get(dir);
    if (here) throw new DataDirInUse(dir, here);
    try {
      await writeFile(file, text, { flag: "wx" });
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    const found = await readFile(file, "utf8").catch(() => undefined);
    const holder = parse(found);
    // Taken over once; a second lock in between is another process's that won the race.
    if (attempt > 0 || (await inForce(file, holder, now))) throw new DataDirInUse(dir, holder);
    await moveAsideIfStill(file, found, dir);
  }
  held.set(dir, mine);
  const beat = setInterval(() => {
    const at = new Date(now());
    utimes(file, at, at).catch(() => {});
  }, HEARTBEAT_MS);
  beat.unref();
  let released = false;
  return {
    async release() {
      if (released) return;
      released = true;
      clearInterval(beat);
      held.delete(dir);
      if ((await readFile(file, "utf8").catch(() => undefined)) === text) await unlink(file).catch(() => {});
    },
  };
}

/**
 * A lock left behind by a process that is gone is taken over by moving it aside (one rename: of
 * two processes taking it over at once, one moves it) and only if what was moved is the lock that
 * was judged dead. Removing it by name instead let a slower taker remove the lock the faster one
 * had just written, and both held the directory. A live lock moved by mistake is put back, and
 * this process is refused.
 */
async function moveAsideIfStill(file: string, found: string | undefined, dir: string): Promise<void> {
  const aside = `${file}.${process.pid}.${randomUUID()}`;
  if (
    !(await rename(file, aside).then(
      () => true,
      () => false,
    ))
  )
    return; // gone already: the next attempt creates it, or finds who did
  const moved = await readFile(aside, "utf8").catch(() => undefined);
  if (moved !== found) {
    await link(aside, file).catch(() => {});
    await unlink(aside).catch(() => {});
    throw new DataDirInUse(dir, parse(moved));
  }
  await unlink(aside).catch(() => {});
}

function parse(text: string | undefined): Holder | undefined {
  try {
    const value = JSON.parse(text ?? "") as Partial<Holder>;
    if (typeof value.pid === "number" && typeof value.host === "string" && typeof value.since === "string")
      return { pid: value.pid, host: value.host, since: value.since };
  } catch {}
  return undefined;
}

/** Whether the lock still stands for its holder. */
async function inForce(file: string, holder: Holder | undefined, now: () => number): Promise<boolean> {
  if (holder && holder.host === hostname()) {
    // This process's own pid in a file it does not hold: a process of an earlier life (a container's
    // pid 1 after a restart).
    if (holder.pid === process.pid) return false;
    return alive(holder.pid) && !(await exited(holder.pid));
  }
  // Another host's lock, or one half written: in force while it is fresh.
  const touched = await stat(file).then(
    (s) => s.mtimeMs,
    () => 0,
  );
  return now() - touched < STALE_MS;
}

/**
 * Killed but not yet reaped (Linux: state Z or X in /proc): it holds nothing any more, yet the
 * kernel still answers for its pid. A container's init, or none, may leave it so for seconds after
 * a kill -9, which would keep the restarted service out for no reason.
 */
async function exited(pid: number): Promise<boolean> {
  const stat = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => undefined);
  const state = stat?.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
  return state === "Z" || state === "X";
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, owned by another user.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
