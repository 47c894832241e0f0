import { spawn } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { describe, expect, it } from "vitest";
import { processAlive } from "../../test/helpers.js";
import { loadLiteSvm } from "./solana/node.js";

/**
 * A process that starts the devnet (both chains), lets the block interval and the Solana slots
 * run (both set short, so a few of each pass in half a second), then stops it and does nothing
 * else: it must end by itself, with nothing left running. What it prints says so whatever the
 * machine's load: the timers stop() waited out (none: it ends on events, test/waits.ts), then,
 * once handles closed by stop() are gone (a turn of the event loop), what still holds the process
 * open beside its standard streams (nothing: no timer, socket, server or child).
 */
const SCRIPT = `
import { startDevnet } from "./src/devnet/index.ts";
import { timersWaitedOut } from "./test/waits.ts";
// What held the process before the devnet: its standard streams (pipes to the test), made now.
process.stdout.write("");
process.stderr.write("");
const before = process.getActiveResourcesInfo();
const devnet = await startDevnet({
  manifestPath: null,
  evmChain: { blockIntervalMs: 100 },
  solanaNode: { slotTimeMs: 50 },
});
console.log("solana " + (devnet.manifest.solana ? "on" : "off"));
await new Promise((resolve) => setTimeout(resolve, 500));
const { waited } = await timersWaitedOut(() => devnet.stop());
console.log("stop waited out " + JSON.stringify(waited));
await new Promise((resolve) => setImmediate(() => setImmediate(resolve)));
const held = process.getActiveResourcesInfo();
for (const kind of before) held.splice(held.indexOf(kind), held.includes(kind) ? 1 : 0);
console.log("held open by " + JSON.stringify(held));
`;

describe("a process that stopped its devnet", () => {
  it("stops without waiting out a timer and exits by itself (no timer or node keeps it alive)", async () => {
    const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", SCRIPT], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    try {
      const lines: string[] = [];
      if (!child.stdout) throw new Error("no stdout");
      createInterface({ input: child.stdout }).on("line", (line) => lines.push(line));
      let timer: NodeJS.Timeout | undefined;
      const [code] = await Promise.race([
        once(child, "exit"),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`still running; output: ${lines.join(" | ")}`)), 45_000);
        }),
      ]).finally(() => clearTimeout(timer));
      expect(code).toBe(0);
      expect(lines).toEqual([
        `solana ${"reason" in loadLiteSvm() ? "off" : "on"}`,
        "stop waited out []",
        "held open by []",
      ]);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    }
  }, 60_000);

  it("leaves no EVM chain process behind when it is killed (kill -9)", async () => {
    const script = `
import { createEdrProvider } from "./src/devnet/evm/edr.ts";
const chain = await createEdrProvider(1000);
console.log("chain " + chain.pid);
setInterval(() => {}, 1000);
`;
    const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    try {
      if (!child.stdout) throw new Error("no stdout");
      const [line] = (await once(createInterface({ input: child.stdout }), "line")) as [string];
      const chainPid = Number(/^chain (\d+)$/.exec(line)?.[1]);
      expect(processAlive(chainPid)).toBe(true);
      child.kill("SIGKILL");
      await once(child, "exit");
      // The chain's process sees the IPC channel close and exits on its own.
      for (let i = 0; i < 100 && processAlive(chainPid); i++) await new Promise((r) => setTimeout(r, 100));
      expect(processAlive(chainPid)).toBe(false);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    }
  }, 60_000);
});
