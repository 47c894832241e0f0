import { readdirSync, readFileSync } from "node:fs";

/**
 * CPU time by process over a window, from Linux's /proc (the scale baseline's "CPU per payment"
 * lines: docs/benchmarks.md#scale-baseline). Clock ticks of 10 ms (Linux's USER_HZ), so windows of
 * seconds read to about 1 %. Off Linux every figure reads 0 and the report says so.
 */
const TICK_MS = 10;

/** utime + stime of a process or thread, in ms; 0 when it is gone. */
function cpuMs(path: string): number {
  try {
    const stat = readFileSync(path, "utf8");
    // Fields after the command (which may hold spaces) in parentheses.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
  } catch {
    return 0;
  }
}

function childrenOf(pid: number): number[] {
  const out: number[] = [];
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      const text = readFileSync(`/proc/${pid}/task/${tid}/children`, "utf8").trim();
      if (text) out.push(...text.split(" ").map(Number));
    }
  } catch {
    // Not Linux, or the process is gone.
  }
  return out;
}

function postgresPids(): number[] {
  const pids: number[] = [];
  try {
    for (const entry of readdirSync("/proc")) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        if (readFileSync(`/proc/${entry}/comm`, "utf8").trim() === "postgres") pids.push(Number(entry));
      } catch {
        // Gone meanwhile.
      }
    }
  } catch {
    // Not Linux.
  }
  return pids;
}

/** Busy and total ms of the whole machine (all cores) since boot. */
function machineMs(): { busy: number; total: number } {
  try {
    const line = readFileSync("/proc/stat", "utf8").split("\n")[0] ?? "";
    const n = line.trim().split(/\s+/).slice(1).map(Number);
    const total = n.reduce((a, b) => a + b, 0) * TICK_MS;
    const idle = ((n[3] ?? 0) + (n[4] ?? 0)) * TICK_MS;
    return { busy: total - idle, total };
  } catch {
    return { busy: 0, total: 0 };
  }
}

export interface CpuSnapshot {
  /** ms of CPU by part: see `parts`. */
  ms: Record<string, number>;
  machine: { busy: number; total: number };
}

/** The parts: this process's main thread (the devnet), its other threads, the instances, the rest of its children (the EVM chain), PostgreSQL. */
export function cpuSnapshot(instancePids: readonly number[]): CpuSnapshot {
  const self = process.pid;
  const main = cpuMs(`/proc/${self}/task/${self}/stat`);
  const whole = cpuMs(`/proc/${self}/stat`);
  const others = childrenOf(self).filter((pid) => !instancePids.includes(pid));
  const sum = (pids: number[]) => pids.reduce((n, pid) => n + cpuMs(`/proc/${pid}/stat`), 0);
  return {
    ms: {
      "devnet (bench main thread)": main,
      "load worker and the bench's other threads": whole - main,
      instances: sum([...instancePids]),
      "EVM chain process": sum(others),
      PostgreSQL: sum(postgresPids()),
    },
    machine: machineMs(),
  };
}

/** CPU ms per payment by part between two snapshots, and the machine's use of its cores. */
export function cpuLine(before: CpuSnapshot, after: CpuSnapshot, payments: number, cores: number): string {
  if (after.machine.total === 0) return "CPU per payment: not measured (no /proc)";
  const perPayment = (k: string) => ((after.ms[k] ?? 0) - (before.ms[k] ?? 0)) / Math.max(payments, 1);
  const parts = Object.keys(after.ms).map((k) => `${k} ${perPayment(k).toFixed(1)}`);
  const busy = after.machine.busy - before.machine.busy;
  const total = after.machine.total - before.machine.total;
  const used = total > 0 ? ((busy / total) * 100).toFixed(0) : "-";
  return `CPU ms per payment: ${parts.join(", ")}; the machine's ${cores} cores ${used} % busy`;
}
