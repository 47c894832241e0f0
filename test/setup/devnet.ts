/**
 * `useTestDevnet()`: the running devnet of this worker (booted once per run by
 * test/setup/devnet-global.ts), for a test file of the `integration` project. It replaces the
 * `startDevnet` in `beforeAll` / `stop` in `afterAll` that each file used to copy, and resets the
 * fault switches after every test. Faults travel over the devnet's control endpoint, so setting
 * one is awaited: `await devnet.faults.set({ settleFail: true })`.
 *
 * The file pays from wallets of its own (fresh keys funded before its first test:
 * test/setup/own-wallets.ts), and at its end waits until the devnet's facilitator and paid services
 * have nothing in flight, so the next file on this devnet starts on an idle network
 * (docs/testing.md).
 */
import { afterAll, afterEach, beforeAll, inject } from "vitest";
import type { Devnet, Faults } from "../../src/devnet/index.js";
import { claimDevnet } from "./devnet-claim.js";
import { ownWallets } from "./own-wallets.js";
import type { SharedDevnet } from "./shared-devnet.js";

export type { SharedDevnet };

declare module "vitest" {
  export interface ProvidedContext {
    devnets: SharedDevnet[];
    /** Where a worker locks the devnet it uses (test/setup/devnet-claim.ts). */
    devnetLocks: string;
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

/** How long a file's end waits for the devnet to finish what is in flight. */
const IDLE_DEADLINE_MS = 30_000;

/**
 * The worker's devnet, with wallets of the calling file's own (`ownWallets: false` keeps the shared
 * ones, for a file that needs the well-known addresses); after each test, and at the end of the
 * file, faults reset and a wait until the devnet is idle.
 */
export function useTestDevnet(options: { ownWallets?: boolean } = {}): TestDevnet {
  const devnets = inject("devnets");
  const lockDir = inject("devnetLocks");
  if (!devnets?.length || !lockDir)
    throw new Error("no devnet provided: run this file in the integration project");
  const shared = devnets[claimDevnet(devnets.length, lockDir)] as SharedDevnet;
  const own = options.ownWallets === false ? undefined : ownWallets(shared);
  const devnet = remote(own?.shared ?? shared);
  if (own) beforeAll(() => control(shared, "POST", "/__devnet/fund", own.fund));
  // Resetting faults releases the settlements a fault held: they land now, so each test waits
  // until the devnet is idle again, or the next test would see them move its balances.
  afterEach(async () => {
    await devnet.faults.reset();
    await servicesIdle();
    await waitIdle(shared);
  });
  afterAll(async () => {
    await devnet.faults.reset();
    await servicesIdle();
    await waitIdle(shared);
  });
  return devnet;
}

/**
 * The services this file booted (test/payments/harness.ts `boot` registers each): a payment still
 * inside one (signed, reserved, not yet sent) is invisible to the devnet's activity counter, so
 * "idle" waits for the services' own open turns and background work first.
 */
const services = new Set<() => Promise<void>>();

/** Register a booted service's idle wait; returns the function that forgets it (on close). */
export function trackServiceIdle(idle: () => Promise<void>): () => void {
  services.add(idle);
  return () => services.delete(idle);
}

/** Waits for every registered service to be idle, bounded (a stuck turn is the test's to report). */
async function servicesIdle(deadlineMs = IDLE_DEADLINE_MS): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, deadlineMs);
  });
  await Promise.race([Promise.all([...services].map((idle) => idle())), late]);
  clearTimeout(timer);
}

/**
 * Resolves once the devnet's facilitator answers no `/verify` or `/settle` and its paid services no
 * request; throws after the deadline.
 */
async function waitIdle(shared: SharedDevnet, deadlineMs = IDLE_DEADLINE_MS): Promise<void> {
  const until = Date.now() + deadlineMs;
  for (;;) {
    const busy = await control<Record<string, number>>(shared, "GET", "/__devnet/activity");
    if (Object.values(busy).every((n) => n === 0)) return;
    if (Date.now() > until)
      throw new Error(
        `the devnet is still busy ${deadlineMs} ms after a test of this file (${JSON.stringify(busy)}): a payment of the test outlived it`,
      );
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A request to the devnet's control server (bearer dev token), its JSON answer. */
async function control<T>(
  shared: SharedDevnet,
  method: "GET" | "POST" | "DELETE",
  path: string,
  body?: unknown,
): Promise<T> {
  const { controlUrl, devToken } = shared.manifest;
  const response = await fetch(new URL(path, controlUrl), {
    method,
    headers: { authorization: `Bearer ${devToken}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (!response.ok)
    throw new Error(`devnet control ${method} ${path}: ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}

function remote(shared: SharedDevnet): TestDevnet {
  const faults = (method: "GET" | "POST" | "DELETE", body?: unknown) =>
    control<Faults>(shared, method, "/__devnet/faults", body);
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
        await faults("POST", patch);
      },
      reset: async () => {
        await faults("DELETE");
      },
      get: () => faults("GET"),
    },
  };
}
