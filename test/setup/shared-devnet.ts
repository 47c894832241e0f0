import type { DevnetManifest } from "../../src/devnet/index.js";

/** A devnet as `provide` hands it over to the test files (structured-clone safe). */
export interface SharedDevnet {
  manifest: DevnetManifest;
  secrets: { evm: Record<string, `0x${string}`>; solana: Record<string, number[]> };
}
