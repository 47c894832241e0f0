import { writeFile } from "node:fs/promises";
import { Session } from "node:inspector/promises";
import { join } from "node:path";

/**
 * A CPU profile of this process between `start` and `stop`, written as `<dir>/<name>.cpuprofile`
 * (Chrome DevTools' format; `npx tsx scripts/profile-summary.ts FILE` prints where the time went).
 * The benchmarks use it for the devnet and the bare clients, which run in the bench's process.
 */
export async function profileSection<T>(dir: string | undefined, name: string, run: () => Promise<T>) {
  if (!dir) return run();
  const stop = await startProfile(dir, name);
  try {
    return await run();
  } finally {
    await stop();
  }
}

/** Starts this process's CPU profile now; the function returned stops it and writes the file. */
export async function startProfile(dir: string, name: string): Promise<() => Promise<void>> {
  const session = new Session();
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.setSamplingInterval", { interval: 500 });
  await session.post("Profiler.start");
  return async () => {
    const { profile } = await session.post("Profiler.stop");
    await writeFile(join(dir, `${name}.cpuprofile`), JSON.stringify(profile));
    session.disconnect();
  };
}
