import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import type { Abi, Hex } from "viem";

/** One compiled contract, as cached in `artifacts.json`. */
export interface ContractArtifact {
  contractName: string;
  abi: Abi;
  /** Creation bytecode (constructor included). */
  bytecode: Hex;
  /** Runtime bytecode, for planting with `hardhat_setCode`. */
  deployedBytecode: Hex;
}

/** The cached compiler output for every devnet contract, plus what produced it. */
export interface ArtifactFile {
  compiler: { version: string; evmVersion: string; optimizerRuns: number };
  /** sha256 of each source, so a stale cache is caught by the artifact test. */
  sources: Record<string, string>;
  contracts: {
    DevUSDC: ContractArtifact;
    /** The same token as FiatToken v2.1: (v,r,s) only, no ERC-1271 (tests plant it in place of DevUSDC). */
    DevUSDCv21: ContractArtifact;
    Multicall3: ContractArtifact;
    /** A minimal ERC-1271 contract wallet and its CREATE2 factory (tests deploy them). */
    DevSmartWallet: ContractArtifact;
    DevSmartWalletFactory: ContractArtifact;
  };
}

/** Shanghai keeps the bytecode free of cancun opcodes (mcopy, tstore), see the x402 notes. */
export const EVM_VERSION = "shanghai";
const OPTIMIZER_RUNS = 200;
const SOURCE_FILES = ["DevUSDC.sol", "Multicall3.sol", "DevSmartWallet.sol"] as const;

/** Absolute path of the repository's `contracts/` folder. */
export const contractsDir = fileURLToPath(new URL("../../../contracts/", import.meta.url));

interface SolcOutput {
  errors?: Array<{ severity: string; formattedMessage: string }>;
  contracts: Record<
    string,
    Record<string, { abi: Abi; evm: { bytecode: { object: string }; deployedBytecode: { object: string } } }>
  >;
}

interface Solc {
  version(): string;
  compile(input: string): string;
}

/**
 * Compiles the devnet contracts with the npm `solc` compiler (slow: seconds). Only the
 * `scripts/compile-token.ts` script and the artifact test call this; start-up reads the cache.
 */
export function compileContracts(): ArtifactFile {
  const require = createRequire(import.meta.url);
  const solc = require("solc") as Solc;
  const { createHash } = require("node:crypto") as typeof import("node:crypto");
  const sources: Record<string, { content: string }> = {};
  const hashes: Record<string, string> = {};
  for (const file of SOURCE_FILES) {
    const content = readFileSync(`${contractsDir}${file}`, "utf8");
    sources[file] = { content };
    hashes[file] = createHash("sha256").update(content).digest("hex");
  }
  const input = {
    language: "Solidity",
    sources,
    settings: {
      evmVersion: EVM_VERSION,
      optimizer: { enabled: true, runs: OPTIMIZER_RUNS },
      metadata: { bytecodeHash: "none", appendCBOR: false },
      outputSelection: { "*": { "*": ["abi", "evm.bytecode.object", "evm.deployedBytecode.object"] } },
    },
  };
  const output = JSON.parse(solc.compile(JSON.stringify(input))) as SolcOutput;
  const errors = (output.errors ?? []).filter((e) => e.severity === "error");
  if (errors.length > 0) {
    throw new Error(`solc failed:\n${errors.map((e) => e.formattedMessage).join("\n")}`);
  }
  const pick = (file: string, name: string): ContractArtifact => {
    const c = output.contracts[file]?.[name];
    if (!c) throw new Error(`solc output lacks ${file}:${name}`);
    return {
      contractName: name,
      abi: c.abi,
      bytecode: `0x${c.evm.bytecode.object}`,
      deployedBytecode: `0x${c.evm.deployedBytecode.object}`,
    };
  };
  return {
    compiler: { version: solc.version(), evmVersion: EVM_VERSION, optimizerRuns: OPTIMIZER_RUNS },
    sources: hashes,
    contracts: {
      DevUSDC: pick("DevUSDC.sol", "DevUSDC"),
      DevUSDCv21: pick("DevUSDC.sol", "DevUSDCv21"),
      Multicall3: pick("Multicall3.sol", "Multicall3"),
      DevSmartWallet: pick("DevSmartWallet.sol", "DevSmartWallet"),
      DevSmartWalletFactory: pick("DevSmartWallet.sol", "DevSmartWalletFactory"),
    },
  };
}
