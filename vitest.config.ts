import { defineConfig } from "vitest/config";
import LongestFirst from "./test/setup/sequencer.js";

/**
 * Three projects (docs/testing.md): `unit` (no devnet, no socket, no child process: enforced by
 * test/setup/unit-guard.ts), `integration` (real chains and servers on loopback: the devnets are
 * booted once per run by test/setup/devnet-global.ts) and `e2e` (spawned processes, the browser,
 * the terminal). A new test file is a unit test unless listed below.
 * Worker counts were chosen by measurement on a 2-core machine (docs/testing.md).
 */
const E2E = [
  "test/browser/static.test.ts",
  "test/browser/web.test.ts",
  "test/browser/newcomer.test.ts",
  "test/browser/approve-page.test.ts",
  "test/browser/operator-page.test.ts",
  "test/client/package.test.ts",
  "test/client/terminal.test.ts",
  "test/crash-replay.test.ts",
  "test/docs.test.ts",
  "test/process.test.ts",
  "test/soak.test.ts",
  "src/devnet/exit.test.ts",
  "src/devnet/lifecycle.test.ts",
  // Its own devnet with 80 ms Solana slots and 60 payments against a blockhash's lifetime: beside
  // another file on a 2-core machine its later payments outlived their service timeout.
  "test/payments/solana-reconcile.test.ts",
  "test/browser/cors.test.ts",
  "test/browser/tool-approval.test.ts",
  "test/client/pack.test.ts",
  "test/cluster.test.ts",
  "test/image.test.ts",
  "test/mcp/stdio.test.ts",
];

const INTEGRATION = [
  "test/payments/!(solana-reconcile).test.ts",
  "src/chains/evm-wallets.test.ts",
  "src/chains/svm.test.ts",
  "src/devnet/evm/artifacts.test.ts",
  "src/models/providers.test.ts",
  "src/devnet/discovery.test.ts",
  "src/devnet/evm/interval.test.ts",
  "src/devnet/evm/token.test.ts",
  "src/devnet/evm/renewal.test.ts",
  "src/devnet/heap.test.ts",
  "src/devnet/faults.test.ts",
  "src/devnet/payments.test.ts",
  "src/discovery/discovery.test.ts",
  "src/http/body.test.ts",
  "src/outbound/safe-fetch.test.ts",
  "src/store/**/*.test.ts",
  "test/chat.test.ts",
  "test/client-error.test.ts",
  "test/client/cli.test.ts",
  "test/client/live.test.ts",
  "test/client/sdk.test.ts",
  "test/client/transport.test.ts",
  "test/rate-limit.test.ts",
  "test/readiness.test.ts",
  "test/store-outage.test.ts",
  "test/store-frozen.test.ts",
  "test/serverless.test.ts",
  "test/build/dependencies.test.ts",
  "test/build/layering.test.ts",
  "test/mcp/http.test.ts",
  "src/ratelimit/rate-limit-readiness.test.ts",
  // A JSON Web Key Set served on loopback.
  "src/http/jwt.test.ts",
  // A fake Solana RPC and a fake EVM RPC on loopback; the devnet's Solana node (its clock, its RPC).
  "src/chains/svm-landed.test.ts",
  "src/chains/evm-resolve.test.ts",
  "src/devnet/solana/local-node.test.ts",
];

const ALL = ["src/**/*.test.ts", "test/**/*.test.ts"];

export default defineConfig({
  test: {
    // Longest files first, from durations kept in the repository (a fresh clone has no cache).
    sequence: { sequencer: LongestFirst },
    projects: [
      {
        test: {
          name: "unit",
          include: ALL,
          exclude: [...E2E, ...INTEGRATION],
          pool: "threads",
          maxWorkers: 2,
          // Files share their worker's module cache: importing the service's modules once per
          // worker, not once per file, more than halves the project's time (docs/testing.md).
          isolate: false,
          setupFiles: ["test/setup/unit-guard.ts"],
          testTimeout: 10_000,
          sequence: { groupOrder: 0 },
        },
      },
      {
        test: {
          name: "integration",
          include: INTEGRATION,
          pool: "forks",
          maxWorkers: 2,
          isolate: false,
          globalSetup: ["test/setup/devnet-global.ts"],
          testTimeout: 30_000,
          hookTimeout: 60_000,
          sequence: { groupOrder: 1 },
        },
      },
      {
        test: {
          name: "e2e",
          include: E2E,
          pool: "forks",
          maxWorkers: 2,
          isolate: false,
          testTimeout: 30_000,
          hookTimeout: 60_000,
          sequence: { groupOrder: 2 },
        },
      },
    ],
  },
});
