/**
 * Measures devnet start-up: "cold" includes loading the modules in a fresh process, "warm" is a
 * second start in the same process. Usage: `npx tsx scripts/measure-devnet-startup.ts [runs]`.
 * The numbers go into docs/devnet.md.
 */
const runs = Number(process.argv[2] ?? 3);
const coldStarted = performance.now();
const { startDevnet } = await import("../src/devnet/index.js");
const imported = performance.now() - coldStarted;
const first = await startDevnet({ manifestPath: null });
const cold = performance.now() - coldStarted;
await first.stop();
const warm: number[] = [];
const stops: number[] = [];
for (let i = 0; i < runs; i++) {
  const started = performance.now();
  const devnet = await startDevnet({ manifestPath: null });
  warm.push(performance.now() - started);
  const stopping = performance.now();
  await devnet.stop();
  stops.push(performance.now() - stopping);
}
const ms = (values: number[]) => values.map((v) => Math.round(v)).join(", ");
console.log(
  JSON.stringify({
    solana: first.manifest.solana !== null,
    importMs: Math.round(imported),
    coldMs: Math.round(cold),
    warmMs: ms(warm),
    stopMs: ms(stops),
  }),
);
