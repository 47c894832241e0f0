/**
 * Measures `npm start` from outside: spawns `npm start` in a checkout, polls `GET /healthz` every
 * 20 ms, and reports the time from spawn to the first 200 and the CPU time its processes used until
 * then (all threads; Linux /proc), then stops it (SIGTERM to its process group) and waits until all
 * of it has ended before the next run. Each run gets a fresh DEVNET_MANIFEST and a free PORT.
 *
 * Usage: `npx tsx scripts/measure-start.ts [--runs=3] [--dir=<checkout>] [--first] [--verbose] [--command=<sh>]`
 *
 * Run it on a fresh clone (`git clone <repo> /tmp/x && cd /tmp/x && npm install`) and the first
 * run is a first start; the following runs are later starts. `TMPDIR` and `DATA_DIR` of the started
 * process are directories kept per checkout (as its `.data` would be): what a start keeps there
 * (the embedded ledger, tsx's cache) is absent for a new clone and there for its later runs;
 * `--first` empties them before every run, so that each run starts like the first one (with
 * whatever `npm install` left in the checkout, such as dist/). `--verbose` prints
 * every output line with its time since spawn. The numbers go into docs/benchmarks.md (Start-up).
 */
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { freePort } from "./lib/free-port.mjs";

const args = new Map(
  process.argv.slice(2).map((a) => {
    const [key, ...value] = a.replace(/^--/, "").split("=");
    return [key as string, value.length > 0 ? value.join("=") : "true"];
  }),
);
const runs = Number(args.get("runs") ?? 3);
const dir = resolve(args.get("dir") ?? process.cwd());
const verbose = args.get("verbose") === "true";
/** Every run a first start: forget what earlier runs kept in TMPDIR and DATA_DIR (dist/ stays). */
const first = args.get("first") === "true";
/** Another command line to measure instead of `npm start` (run by sh), for experiments. */
const command = args.get("command");
const childTmp = join(
  tmpdir(),
  `measure-start-${createHash("sha256").update(dir).digest("hex").slice(0, 12)}`,
);
mkdirSync(childTmp, { recursive: true });

async function healthy(url: string): Promise<boolean> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(1000) });
    await response.arrayBuffer();
    return response.status === 200;
  } catch {
    return false;
  }
}

/** CPU seconds used so far by the processes of a process group (Linux /proc; clock ticks of 10 ms). */
function groupCpuMs(pgid: number): number {
  let ticks = 0;
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      // Fields after the command name: state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime
      const fields = readFileSync(`/proc/${pid}/stat`, "utf8")
        .replace(/^.*\) /, "")
        .split(" ");
      if (Number(fields[2]) === pgid) ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // gone meanwhile
    }
  }
  return ticks * 10;
}

function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

interface Run {
  readyMs: number;
  cpuMs: number;
  exitCode: number | null;
  lines: string[];
}

async function measure(): Promise<Run> {
  if (first) {
    rmSync(childTmp, { recursive: true, force: true });
    mkdirSync(childTmp, { recursive: true });
  }
  const port = await freePort();
  const work = mkdtempSync(join(tmpdir(), "measure-start-run-"));
  const started = performance.now();
  const at = () => (performance.now() - started).toFixed(0).padStart(5);
  const child = spawn(command ? "sh" : "npm", command ? ["-c", command] : ["start", "--silent"], {
    cwd: dir,
    env: {
      ...process.env,
      PORT: String(port),
      HOST: "127.0.0.1",
      // Kept per checkout, like its .data: absent on the first run, reused by the later ones.
      DATA_DIR: join(childTmp, "data"),
      DEVNET_MANIFEST: join(work, "manifest.json"),
      TMPDIR: childTmp,
    },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true, // its own process group: npm does not pass SIGTERM on, so signal the group
  });
  const lines: string[] = [];
  const take = (stream: string) => (chunk: Buffer) => {
    for (const line of chunk.toString().split("\n"))
      if (line) lines.push(`${at()} ms ${stream} ${line.slice(0, 160)}`);
  };
  child.stdout?.on("data", take("out"));
  child.stderr?.on("data", take("err"));
  const exited = new Promise<number | null>((resolveExit) => child.on("exit", (code) => resolveExit(code)));
  let done = false;
  void exited.then(() => {
    done = true;
  });
  let readyMs = Number.NaN;
  let cpuMs = Number.NaN;
  while (!done && performance.now() - started < 120_000) {
    if (await healthy(`http://127.0.0.1:${port}/healthz`)) {
      readyMs = performance.now() - started;
      if (child.pid) cpuMs = groupCpuMs(child.pid);
      break;
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  lines.push(`${at()} ms -- ${Number.isNaN(readyMs) ? "never ready" : "/healthz 200"}`);
  if (child.pid && !done) process.kill(-child.pid, "SIGTERM");
  const exitCode = await exited;
  // npm may end before the service it started: wait until the whole group is gone.
  while (child.pid && groupAlive(child.pid)) await new Promise((r) => setTimeout(r, 20));
  lines.push(`${at()} ms -- stopped`);
  rmSync(work, { recursive: true, force: true });
  return { readyMs, cpuMs, exitCode, lines };
}

const results: number[] = [];
const cpu: number[] = [];
for (let i = 1; i <= runs; i++) {
  const run = await measure();
  results.push(run.readyMs);
  cpu.push(run.cpuMs);
  console.log(
    `run ${i}: ready in ${Math.round(run.readyMs)} ms, ${run.cpuMs} ms of CPU (exit ${run.exitCode}; load average ${loadavg()[0]?.toFixed(2)})`,
  );
  if (verbose || Number.isNaN(run.readyMs)) for (const line of run.lines) console.log(`  ${line}`);
}
function median(values: number[]): number {
  const sorted = values.filter((v) => !Number.isNaN(v)).sort((a, b) => a - b);
  const middle = sorted.length / 2;
  const value = Number.isInteger(middle)
    ? ((sorted[middle - 1] ?? Number.NaN) + (sorted[middle] ?? Number.NaN)) / 2
    : (sorted[Math.floor(middle)] ?? Number.NaN);
  return Math.round(value);
}
console.log(
  JSON.stringify({ dir, runs: results.map(Math.round), medianMs: median(results), medianCpuMs: median(cpu) }),
);
