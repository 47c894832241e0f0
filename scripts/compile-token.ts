/**
 * Compiles contracts/DevUSDC.sol, Multicall3.sol and DevSmartWallet.sol with the npm `solc` compiler and
 * writes src/devnet/evm/artifacts.json, which the devnet loads at start-up instead of compiling.
 * Run after editing a contract: `npx tsx scripts/compile-token.ts` (the artifact test fails
 * until you do).
 */
import { writeFileSync } from "node:fs";
import { artifactsPath } from "../src/devnet/evm/artifacts.js";
import { compileContracts } from "../src/devnet/evm/compile.js";

const started = Date.now();
const artifacts = compileContracts();
writeFileSync(artifactsPath, `${JSON.stringify(artifacts, null, 2)}\n`);
console.log(
  `wrote ${artifactsPath.pathname} (solc ${artifacts.compiler.version}, evm ${artifacts.compiler.evmVersion}) in ${Date.now() - started} ms`,
);
