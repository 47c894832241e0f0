/**
 * The integration project's devnets, in a process of their own (started by devnet-global.ts with
 * tsx): `count` devnets, then one JSON line on stdout with what the test files need (manifests and
 * keys), then they run until stdin closes or a signal comes, and stop. Outside vitest's own process
 * because the chains' native modules must be loaded by Node's loader, and so that a hung chain can
 * be killed with the process.
 */
import { type Devnet, startDevnet } from "../../src/devnet/index.js";
import type { SharedDevnet } from "./devnet.js";

const count = Math.max(1, Number(process.argv[2]) || 1);
const started = await Promise.allSettled(
  Array.from({ length: count }, () => startDevnet({ manifestPath: null })),
);
const devnets = started.flatMap((s) => (s.status === "fulfilled" ? [s.value] : []));
let stopping: Promise<void> | undefined;
const stop = () => {
  stopping ??= Promise.all(devnets.map((d) => d.stop())).then(() => process.exit(0));
  return stopping;
};
const failed = started.find((s): s is PromiseRejectedResult => s.status === "rejected");
if (failed) {
  process.stderr.write(`devnet did not start: ${String(failed.reason)}\n`);
  await Promise.all(devnets.map((d) => d.stop()));
  process.exit(1);
}
process.stdout.write(`${JSON.stringify(devnets.map(shared))}\n`);
process.stdin.on("end", stop).on("close", stop).resume();
process.on("SIGTERM", stop).on("SIGINT", stop);

/** Plain data: keys as hex and number arrays. */
function shared(devnet: Devnet): SharedDevnet {
  return {
    manifest: devnet.manifest,
    secrets: {
      evm: devnet.secrets.evm,
      solana: Object.fromEntries(Object.entries(devnet.secrets.solana).map(([k, v]) => [k, [...v]])),
    },
  };
}
