import { existsSync, readdirSync, readFileSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { getBase58Decoder } from "@solana/kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { timersWaitedOut } from "../../test/waits.js";
import { type Devnet, type DevnetManifest, startDevnet } from "./index.js";
import { DEFAULT_MANIFEST_PATH, resolveManifestPath } from "./manifest.js";

/** Pids of this process's children (Linux /proc), to prove the devnet spawns none. */
/** This process's children, in ascending pid order (not /proc's listing order, which is by name). */
function childPids(): number[] {
  if (!existsSync("/proc")) return [];
  const children: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (ppid === process.pid) children.push(Number(entry));
    } catch {
      // The process exited while we looked.
    }
  }
  return children.sort((a, b) => a - b);
}

async function refuses(url: string): Promise<boolean> {
  try {
    await fetch(url, { method: "POST", signal: AbortSignal.timeout(2_000) });
    return false;
  } catch (error) {
    return /ECONNREFUSED/.test(String((error as { cause?: unknown }).cause ?? error));
  }
}

function urlsOf(manifest: DevnetManifest): string[] {
  return [
    manifest.facilitatorUrl,
    manifest.controlUrl,
    manifest.evm.rpcUrl,
    ...manifest.services.map((s) => s.url),
    ...(manifest.solana ? [manifest.solana.rpcUrl, manifest.solana.wsUrl.replace(/^ws/, "http")] : []),
  ];
}

describe("start and stop", () => {
  let dir: string;
  let devnet: Devnet;
  let waited: number[];
  let startCpuMs: number;
  const childrenBefore = childPids();

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "devnet-lifecycle-"));
    const cpu = process.cpuUsage();
    ({ value: devnet, waited } = await timersWaitedOut(() =>
      startDevnet({ manifestPath: join(dir, "manifest.json"), devToken: "test-token" }),
    ));
    const used = process.cpuUsage(cpu);
    startCpuMs = (used.user + used.system) / 1000;
  });
  afterAll(async () => {
    await devnet?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  // Time to ready, told apart from the machine's load: the work it does (this process's CPU, 1-2 s
  // here) and the timers it waits out (none: each step ends on an event, test/waits.ts).
  it("is ready after a few seconds of work and no wait, on loopback", () => {
    expect(waited).toEqual([]);
    expect(startCpuMs, "ms of CPU to start").toBeLessThan(10_000);
    for (const url of urlsOf(devnet.manifest)) expect(new URL(url).hostname).toBe("127.0.0.1");
  });

  it("writes a manifest with public data only", async () => {
    const text = await readFile(join(dir, "manifest.json"), "utf8");
    const manifest = JSON.parse(text) as DevnetManifest;
    expect(manifest).toEqual(devnet.manifest);
    expect(manifest).toMatchObject({ version: 1, devToken: "test-token", evm: { chainId: 31337 } });
    expect(manifest.evm.wallets.map((w) => w.role)).toEqual(
      expect.arrayContaining(["payer", "payer-low", "merchant", "facilitator"]),
    );
    for (const key of Object.values(devnet.secrets.evm))
      expect(text.toLowerCase()).not.toContain(key.slice(2));
    for (const key of Object.values(devnet.secrets.solana)) {
      expect(text).not.toContain(getBase58Decoder().decode(key));
      expect(text).not.toContain(getBase58Decoder().decode(key.subarray(0, 32)));
    }
    expect(text).not.toMatch(/secret|private/i);
  });

  it("gives the caller the funded wallets' keys in-process", () => {
    for (const wallet of devnet.manifest.evm.wallets)
      expect(devnet.secrets.evm[wallet.name]).toMatch(/^0x[0-9a-f]{64}$/);
    for (const wallet of devnet.manifest.solana?.wallets ?? [])
      expect(devnet.secrets.solana[wallet.name]).toHaveLength(64);
  });

  it("runs one child process, its EVM chain's, and stop() ends it and frees every port", async () => {
    expect(childPids()).toEqual([...childrenBefore, devnet.evmChainPid()].sort((a, b) => a - b));
    const urls = urlsOf(devnet.manifest);
    for (const url of urls) expect(await refuses(url), url).toBe(false);
    await devnet.stop();
    await devnet.stop(); // idempotent
    for (const url of urls) expect(await refuses(url), url).toBe(true);
    expect(childPids()).toEqual(childrenBefore);
    expect(existsSync(join(dir, "manifest.json"))).toBe(false);
  });
});

describe("several devnets", () => {
  it("run side by side on different ports, EVM-only when Solana is switched off", async () => {
    const [a, b] = await Promise.all([
      startDevnet({ manifestPath: null, solana: false }),
      startDevnet({ manifestPath: null, solana: false }),
    ]);
    try {
      expect(a.manifest.facilitatorUrl).not.toBe(b.manifest.facilitatorUrl);
      expect(a.manifest.evm.rpcUrl).not.toBe(b.manifest.evm.rpcUrl);
      expect(a.manifest.devToken).not.toBe(b.manifest.devToken);
      expect(a.manifest.solana).toBeNull();
      expect(a.manifest.solanaUnavailableReason).toMatch(/disabled/);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });
});

describe("manifest path", () => {
  it("defaults to .data/devnet/manifest.json, honours DEVNET_MANIFEST, and the option wins", () => {
    expect(resolveManifestPath(undefined, {})).toBe(resolve(DEFAULT_MANIFEST_PATH));
    expect(resolveManifestPath(undefined, { DEVNET_MANIFEST: "/tmp/m.json" })).toBe("/tmp/m.json");
    expect(resolveManifestPath("/x/y.json", { DEVNET_MANIFEST: "/tmp/m.json" })).toBe("/x/y.json");
    expect(resolveManifestPath(null, { DEVNET_MANIFEST: "/tmp/m.json" })).toBeNull();
  });
});
