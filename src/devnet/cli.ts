/**
 * `npm run devnet`: starts the local x402 network on loopback, prints where everything is and
 * runs until Ctrl-C / SIGTERM, then stops every server and node and exits. Environment:
 * `DEVNET_MANIFEST` (manifest path), `DEVNET_TOKEN` (fixed dev token), `DEVNET_SOLANA=0`
 * (EVM only), `DEVNET_HOST` (bind address, default 127.0.0.1).
 */
import { existsSync, readFileSync } from "node:fs";
import { type Devnet, SOLANA_SLOT_TIME_MS, startDevnet } from "./index.js";
import { resolveManifestPath } from "./manifest.js";

function formatUsdc(atomic: string): string {
  const value = BigInt(atomic);
  const fraction = (value % 1_000_000n)
    .toString()
    .padStart(6, "0")
    .replace(/0{1,4}$/, "");
  return `${value / 1_000_000n}.${fraction.padEnd(2, "0")} USDC`;
}

function describe(devnet: Devnet, manifestPath: string | null, startMs: number): string {
  const m = devnet.manifest;
  const lines = [
    "",
    `x402 devnet ready in ${startMs} ms`,
    "",
    `  facilitator   ${m.facilitatorUrl}`,
    `  discovery     ${m.discoveryUrl}`,
    `  fault control ${m.controlUrl}   (Authorization: Bearer ${m.devToken})`,
    `  manifest      ${manifestPath ?? "(not written)"}`,
    "",
    "  services",
    ...m.services.map(
      (s) => `    ${s.method.padEnd(4)} ${s.url.padEnd(44)} $${s.priceUsd.padEnd(6)} ${s.name}`,
    ),
    "",
    `  EVM ${m.evm.network}   rpc ${m.evm.rpcUrl}`,
    `    USDC ${m.evm.usdc}   Multicall3 ${m.evm.multicall3}`,
    ...m.evm.wallets.map(
      (w) => `    ${w.name.padEnd(12)} ${w.address}  ${formatUsdc(w.usdcAtomic).padStart(16)}  (${w.role})`,
    ),
    "",
  ];
  if (m.solana) {
    lines.push(
      `  Solana ${m.solana.network} (local LiteSVM node posing as devnet)   rpc ${m.solana.rpcUrl}   ws ${m.solana.wsUrl}`,
      `    USDC mint ${m.solana.usdcMint}`,
      ...m.solana.wallets.map(
        (w) =>
          `    ${w.name.padEnd(12)} ${w.address.padEnd(44)}  ${formatUsdc(w.usdcAtomic).padStart(16)}  (${w.role})`,
      ),
    );
  } else {
    lines.push(`  Solana unavailable: ${m.solanaUnavailableReason ?? "unknown reason"}`);
  }
  lines.push(
    "",
    "  Wallet keys are Hardhat's public test keys and seeds committed in src/devnet (see docs/devnet.md).",
    "  Press Ctrl-C to stop.",
    "",
  );
  return lines.join("\n");
}

/** Parent pid of `pid` from /proc (Linux), or null when unknown or gone. */
function parentOf(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
  } catch {
    return null;
  }
}

/**
 * `npm run devnet` runs npm -> sh -> tsx -> this process. A SIGTERM sent to npm alone kills npm
 * and sh without telling us, which would orphan the devnet and keep its ports. So we watch the
 * launcher chain (up to three ancestors) and stop when any of them is gone. Linux only.
 */
function watchLaunchers(onGone: () => void): void {
  if (!existsSync("/proc/self/stat")) return;
  const ancestors: number[] = [];
  for (let pid = process.pid; ancestors.length < 3; ) {
    const parent = parentOf(pid);
    if (parent === null || parent <= 1) break;
    ancestors.push(parent);
    pid = parent;
  }
  const timer = setInterval(() => {
    if (ancestors.some((pid) => !existsSync(`/proc/${pid}`))) onGone();
  }, 1_000);
  timer.unref();
}

async function main(): Promise<void> {
  const manifestPath = resolveManifestPath(undefined);
  const started = Date.now();
  const devnet = await startDevnet({
    manifestPath,
    solanaNode: { slotTimeMs: SOLANA_SLOT_TIME_MS },
    ...(process.env.DEVNET_TOKEN ? { devToken: process.env.DEVNET_TOKEN } : {}),
    ...(process.env.DEVNET_SOLANA === "0" ? { solana: false } : {}),
    ...(process.env.DEVNET_HOST ? { host: process.env.DEVNET_HOST } : {}),
    log: (line) => console.error(line),
  });
  console.log(describe(devnet, manifestPath, Date.now() - started));

  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.error(`devnet: ${signal}, stopping...`);
    const force = setTimeout(() => {
      console.error("devnet: stop took too long, exiting");
      process.exit(1);
    }, 10_000);
    force.unref();
    devnet.stop().then(
      () => {
        console.error("devnet: stopped");
        process.exit(0);
      },
      (error: unknown) => {
        console.error(`devnet: error while stopping: ${String(error)}`);
        process.exit(1);
      },
    );
  };
  process.on("SIGINT", () => shutdown("SIGINT"));
  process.on("SIGTERM", () => shutdown("SIGTERM"));
  process.on("SIGHUP", () => shutdown("SIGHUP"));
  watchLaunchers(() => shutdown("launcher exited"));
}

main().catch((error: unknown) => {
  console.error(`devnet: failed to start: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
