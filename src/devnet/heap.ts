import { setFlagsFromString } from "node:v8";

/**
 * How far V8 lets the heap of the devnet's process grow past what the last full collection left
 * live: 50%, instead of V8's own choice of up to 300% on a machine with more than 2 GB of heap
 * limit (V8 scales it with the mutator's allocation rate). The devnet's process (the chains'
 * clients, the facilitator, the sellers and, under `npm start`, the service) allocates about 80 MB a
 * second at 10 payments a second while keeping about 110 MB live; at up to 4x V8 reserved heap up
 * to about 450 MB and kept it, and the process's memory crept up for minutes (the soak's verdict
 * GROWING, +157 MB). At 1.5x the same soak reads flat with no slower payment (docs/devnet.md,
 * "Long runs"). The flag is read at every collection, so setting it once the process runs works;
 * a `--heap-growing-percent` given on Node's command line wins.
 */
export const DEVNET_HEAP_GROWING_PERCENT = 50;

export function boundHeapGrowth(execArgv: readonly string[] = process.execArgv): boolean {
  if (execArgv.some((a) => /^--heap[-_]growing[-_]percent/.test(a))) return false;
  setFlagsFromString(`--heap-growing-percent=${DEVNET_HEAP_GROWING_PERCENT}`);
  return true;
}
