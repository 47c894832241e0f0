import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, stat, utimes, writeFile } from "node:fs/promises";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { DataDirInUse, HEARTBEAT_MS, holdDataDir, STALE_MS } from "./dir-lock.js";
import { openStore } from "./index.js";

/**
 * One process at a time in an embedded database's directory (dir-lock.ts): PGlite has no lock of
 * its own, and a second process on the same directory would keep a ledger of its own beside the
 * first's. Integration: a real second process holds the lock, and real PGlite stores open.
 */

let root: string;
let dir: string;
const children: ChildProcess[] = [];

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "dir-lock-"));
  dir = join(root, "pglite");
});
afterEach(async () => {
  vi.useRealTimers();
  for (const child of children.splice(0)) child.kill("SIGKILL");
  await rm(root, { recursive: true, force: true });
});

/** Another process on this host that wrote the lock as a holder does, and waits. */
async function holderProcess(): Promise<ChildProcess> {
  const script = `require("fs").writeFileSync(${JSON.stringify(`${dir}.lock`)}, JSON.stringify({ pid: process.pid, host: require("os").hostname(), since: new Date().toISOString() }), { flag: "wx" }); console.log("held"); setInterval(() => {}, 1000);`;
  const child = spawn(process.execPath, ["-e", script], { stdio: ["ignore", "pipe", "inherit"] });
  children.push(child);
  await new Promise((resolve, reject) => {
    child.stdout?.once("data", resolve);
    child.once("exit", reject);
  });
  return child;
}

describe("holdDataDir", () => {
  it("refuses a second holder in this process until the first releases; the file goes with it", async () => {
    const first = await holdDataDir(dir);
    await expect(holdDataDir(dir)).rejects.toThrow(DataDirInUse);
    await expect(holdDataDir(dir)).rejects.toThrow(`in use by process ${process.pid}`);
    await first.release();
    expect(existsSync(`${dir}.lock`)).toBe(false);
    const again = await holdDataDir(dir);
    await again.release();
  });

  it("refuses while another live process holds it, naming it; takes it at once after a kill -9", async () => {
    const child = await holderProcess();
    const refused = await holdDataDir(dir).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(DataDirInUse);
    expect((refused as DataDirInUse).message).toContain(`process ${child.pid} on ${hostname()}`);
    expect((refused as DataDirInUse).message).toContain("DATABASE_URL");
    child.kill("SIGKILL");
    await new Promise((resolve) => child.once("exit", resolve));
    const taken = await holdDataDir(dir);
    await taken.release();
  });

  it.runIf(process.platform === "linux")(
    "takes over at once from a holder killed but not yet reaped (a zombie)",
    async () => {
      // Perl forks a child that exits at once and never reaps it. (`sh -c 'true & exec sleep 60'`
      // did not always: sh could reap the child before it became `sleep`.)
      const parent = spawn(
        "perl",
        ["-e", '$| = 1; my $p = fork(); exit 0 unless $p; print "$p\\n"; sleep 60'],
        {
          stdio: ["ignore", "pipe", "inherit"],
        },
      );
      children.push(parent);
      const pid = Number(
        await new Promise<string>((resolve) => parent.stdout?.once("data", (c) => resolve(String(c)))),
      );
      await expect
        .poll(async () => (await readFile(`/proc/${pid}/stat`, "utf8")).split(") ")[1]?.[0])
        .toBe("Z");
      await writeFile(
        `${dir}.lock`,
        JSON.stringify({ pid, host: hostname(), since: new Date().toISOString() }),
      );
      const taken = await holdDataDir(dir);
      await taken.release();
    },
  );

  it("two processes taking over a dead holder's lock at the same moment: never both hold it", async () => {
    // Each round: a lock left by a process that is gone, and two processes that try to take it over
    // at one instant and keep it for half a round. Before takeover moved the dead lock aside, the
    // slower taker removed the faster one's new lock by name and both held it (3 rounds in 10).
    const rounds = 20;
    const gap = 150;
    for (let round = 0; round < rounds; round++) {
      await mkdir(join(root, `r${round}`));
      const dead = { pid: 999_999_999, host: hostname(), since: new Date().toISOString() };
      await writeFile(join(root, `r${round}`, "pglite.lock"), JSON.stringify(dead));
    }
    const module = JSON.stringify(fileURLToPath(new URL("./dir-lock.ts", import.meta.url)));
    const script = `import { holdDataDir } from ${module};
      const [root, base] = process.argv.slice(-2);
      const sleep = (ms) => new Promise((r) => setTimeout(r, Math.max(0, ms)));
      const held = [];
      for (let round = 0; round < ${rounds}; round++) {
        await sleep(Number(base) + round * ${gap} - Date.now());
        try {
          const lock = await holdDataDir(root + "/r" + round + "/pglite");
          const from = Date.now();
          await sleep(${gap / 2});
          held.push([round, from, Date.now()]);
          await lock.release();
        } catch (error) {
          if (error.name !== "DataDirInUse") throw error;
        }
      }
      console.log(JSON.stringify(held));`;
    const base = String(Date.now() + 3000);
    const run = () =>
      new Promise<[number, number, number][]>((resolve, reject) => {
        const child = spawn(
          process.execPath,
          ["--import", "tsx", "--input-type=module", "-e", script, root, base],
          { stdio: ["ignore", "pipe", "inherit"] },
        );
        children.push(child);
        let out = "";
        child.stdout?.on("data", (chunk: Buffer) => {
          out += chunk.toString();
        });
        child.once("exit", (code) =>
          code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`exit ${code}`)),
        );
      });
    const [one, two] = await Promise.all([run(), run()]);
    for (let round = 0; round < rounds; round++) {
      const spans = [...(one ?? []), ...(two ?? [])].filter(([r]) => r === round);
      // Someone takes a dead lock over; two holders' spans never overlap.
      expect(spans.length, `round ${round}`).toBeGreaterThan(0);
      const [a, b] = spans.sort((x, y) => x[1] - y[1]);
      if (a && b) expect(b[1], `round ${round}: both held it`).toBeGreaterThanOrEqual(a[2]);
    }
  });

  it("from another host: in force while touched within STALE_MS, taken over after", async () => {
    const other = { pid: 1, host: `not-${hostname()}`, since: new Date().toISOString() };
    await writeFile(`${dir}.lock`, JSON.stringify(other));
    await expect(holdDataDir(dir)).rejects.toThrow(`process 1 on not-${hostname()}`);
    const old = new Date(Date.now() - STALE_MS - 1000);
    await utimes(`${dir}.lock`, old, old);
    const taken = await holdDataDir(dir);
    await taken.release();
  });

  it("its holder touches the file every HEARTBEAT_MS, so another host sees it in force", async () => {
    vi.useFakeTimers({ toFake: ["setInterval", "clearInterval"] });
    let clock = Date.parse("2026-11-28T12:00:00Z");
    const held = await holdDataDir(dir, () => clock);
    clock += 60_000;
    vi.advanceTimersByTime(HEARTBEAT_MS);
    await expect.poll(async () => (await stat(`${dir}.lock`)).mtimeMs).toBe(clock);
    await held.release();
  });
});

describe("openStore on a directory", () => {
  it("a second store on the same directory is refused; the first keeps its rows, and a reopen sees them", async () => {
    const first = await openStore({ dataDir: dir });
    await expect(openStore({ dataDir: dir })).rejects.toThrow(DataDirInUse);
    const now = new Date();
    const limits = { perTransaction: 10n ** 7n, perRequest: 10n ** 7n, daily: 10n ** 7n };
    const reserved = await first.ledger.reserve({
      paymentId: "pay_one_holder",
      wallet: "0xholder",
      scopeId: "req_1",
      service: "https://a.example/x",
      network: "eip155:31337",
      asset: "0xasset",
      payTo: "0xpayee",
      amount: 10n ** 6n,
      requirement: { scheme: "exact" },
      limits,
      now,
    });
    expect(reserved.ok).toBe(true);
    await first.close();
    expect(existsSync(`${dir}.lock`)).toBe(false);
    const reopened = await openStore({ dataDir: dir });
    try {
      expect(await reopened.ledger.get("pay_one_holder")).toMatchObject({ status: "reserved" });
    } finally {
      await reopened.close();
    }
  });
});
