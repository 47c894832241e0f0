import { spawn } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { describe, expect, it } from "vitest";
import { processAlive } from "../../test/helpers.js";
import { loadLiteSvm } from "./solana/node.js";

/**
 * A process that starts the devnet (both chains), lets the block interval and the Solana slots
 * run (both set short, so a few of each pass in half a second), then stops it and does nothing
 * else: it must end by itself, with nothing left running.
 */
const SCRIPT = `
import { startDevnet } from "./src/devnet/index.ts";
const devnet = await startDevnet({
  manifestPath: null,
  evmChain: { blockIntervalMs: 100 },
  solanaNode: { slotTimeMs: 50 },
});
console.log("solana " + (devnet.manifest.solana ? "on" : "off"));
await new Promise((resolve) => setTimeout(resolve, 500));
const started = Date.now();
await devnet.stop();
console.log("stopped in " + (Date.now() - started) + " ms");
`;

describe("a process that stopped its devnet", () => {
  it("stops quickly and exits by itself (no timer or node keeps it alive)", async () => {
    const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", SCRIPT], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    try {
      const lines: string[] = [];
      let stoppedAt = 0;
      if (!child.stdout) throw new Error("no stdout");
      createInterface({ input: child.stdout }).on("line", (line) => {
        lines.push(line);
        if (line.startsWith("stopped in")) stoppedAt = Date.now();
      });
      let timer: NodeJS.Timeout | undefined;
      const [code] = await Promise.race([
        once(child, "exit"),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`still running; output: ${lines.join(" | ")}`)), 45_000);
        }),
      ]).finally(() => clearTimeout(timer));
      expect(code).toBe(0);
      expect(lines[0]).toBe(`solana ${"reason" in loadLiteSvm() ? "off" : "on"}`);
      const stopMs = Number(/stopped in (\d+) ms/.exec(lines[1] ?? "")?.[1]);
      expect(stopMs).toBeLessThan(2_000);
      expect(Date.now() - stoppedAt).toBeLessThan(3_000);
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
