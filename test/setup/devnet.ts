/**
 * `useTestDevnet()`: the running devnet of this worker (booted once per run by
 * test/setup/devnet-global.ts), for a test file of the `integration` project. It replaces the
 * `startDevnet` in `beforeAll` / `stop` in `afterAll` that each file used to copy, and resets the
 * fault switches after every test. Faults travel over the devnet's control endpoint, so setting
 * one is awaited: `await devnet.faults.set({ settleFail: true })`.
 */
import { afterEach, inject } from "vitest";
import type { Devnet, DevnetManifest, Faults } from "../../src/devnet/index.js";

/** A devnet as `provide` hands it over (structured-clone safe). */
export interface SharedDevnet {
  manifest: DevnetManifest;
  secrets: { evm: Record<string, `0x${string}`>; solana: Record<string, number[]> };
}

declare module "vitest" {
  export interface ProvidedContext {
    devnets: SharedDevnet[];
  }
}

/** The devnet a test file sees: what `Devnet` has, with the fault switches reached over HTTP. */
export interface TestDevnet extends Pick<Devnet, "manifest" | "secrets"> {
  faults: {
    set(patch: Partial<Faults>): Promise<void>;
    reset(): Promise<void>;
    get(): Promise<Faults>;
  };
}

/** The worker's devnet, faults reset after each test of the calling file. */
export function useTestDevnet(): TestDevnet {
  const devnets = inject("devnets");
  if (!devnets?.length) throw new Error("no devnet provided: run this file in the integration project");
  // VITEST_POOL_ID is 1..maxWorkers, one per worker for the whole run.
  const index = (Number(process.env.VITEST_POOL_ID ?? "1") - 1) % devnets.length;
  const devnet = remote(devnets[index] as SharedDevnet);
  afterEach(() => devnet.faults.reset());
  return devnet;
}

function remote(shared: SharedDevnet): TestDevnet {
  const { controlUrl, devToken } = shared.manifest;
  const control = async (method: "GET" | "POST" | "DELETE", body?: unknown): Promise<Faults> => {
    const response = await fetch(controlUrl, {
      method,
      headers: { authorization: `Bearer ${devToken}`, "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    if (!response.ok)
      throw new Error(`devnet control ${method}: ${response.status} ${await response.text()}`);
    return (await response.json()) as Faults;
  };
  return {
    manifest: shared.manifest,
    secrets: {
      evm: shared.secrets.evm,
      solana: Object.fromEntries(
        Object.entries(shared.secrets.solana).map(([k, v]) => [k, Uint8Array.from(v)]),
      ),
    },
    faults: {
      set: async (patch) => {
        await control("POST", patch);
      },
      reset: async () => {
        await control("DELETE");
      },
      get: () => control("GET"),
    },
  };
}
