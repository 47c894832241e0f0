import { createRequire } from "node:module";

/**
 * The embedded devnet runs Hardhat's EVM node (and LiteSVM's Solana runtime): development
 * dependencies, absent from a production install (`npm ci --omit=dev`, docs/deploy.md). Without
 * them `PAYMENTS=devnet` stops here, with one message that says what to do, before anything starts.
 */
export function assertDevnetInstalled(): void {
  try {
    createRequire(import.meta.url).resolve("hardhat/package.json");
  } catch {
    throw new Error(
      "PAYMENTS=devnet needs the embedded devnet's packages (Hardhat, LiteSVM), which this install " +
        "leaves out (installed without development dependencies). Set PAYMENTS=external with real " +
        "networks, or PAYMENTS=off; for the devnet, install everything with `npm install`.",
    );
  }
}
