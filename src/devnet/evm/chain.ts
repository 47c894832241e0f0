import type { Server } from "node:http";
import { createRequire } from "node:module";
import {
  type Address,
  createWalletClient,
  custom,
  type EIP1193Provider,
  type Hex,
  publicActions,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { hardhat } from "viem/chains";
import { PromiseQueue } from "../queue.js";
import { DEPLOYER_KEY, evmWallets } from "./accounts.js";
import { loadArtifacts } from "./artifacts.js";

/** Where every chain has Multicall3; x402's facilitator diagnoses failures through it. */
export const MULTICALL3_ADDRESS: Address = "0xcA11bde05977b3631167028862bE2a173976CA11";
export const EVM_CHAIN_ID = 31337;
export const EVM_NETWORK = `eip155:${EVM_CHAIN_ID}` as const;
/** EIP-712 domain of the token, equal to Circle's USDC so the "exact" scheme's defaults apply. */
export const USDC_DOMAIN = { name: "USD Coin", version: "2" } as const;
const GAS_ETH_WEI = 10_000n * 10n ** 18n;
/**
 * An empty block every second besides automine, so chain time follows the wall clock while no
 * transaction comes (the reconciler judges EIP-3009 `validBefore` by chain time).
 */
export const DEFAULT_BLOCK_INTERVAL_MS = 1_000;

export interface EvmChainOptions {
  /** Interval mining period in ms besides automine; 0 turns it off. Default {@link DEFAULT_BLOCK_INTERVAL_MS}. */
  blockIntervalMs?: number;
}

/** The process's one EDR context, once registered (see startEvmChain). */
let edrContext: Promise<unknown> | undefined;

/** A running local EVM chain with the token deployed and the wallets funded. */
export interface EvmChain {
  rpcUrl: string;
  usdc: Address;
  /** In-process EIP-1193 provider (fast path for setup and balance reads). */
  provider: EIP1193Provider;
  wallets: ReturnType<typeof evmWallets>;
  /** Gives `address` the wallets' gas ETH and mints it `usdcAtomic` (the devnet's faucet). */
  fund(address: Address, usdcAtomic: bigint): Promise<void>;
  stop(): Promise<void>;
}

interface HardhatJsonRpcServer {
  listen(): Promise<{ address: string; port: number }>;
  close(): Promise<void>;
  _httpServer: Server;
}

/**
 * Starts Hardhat 2's EDR node inside this process (no child process to orphan) and serves it
 * over JSON-RPC on `host`, port 0. `allowBlocksWithSameTimestamp` keeps bursts of payments
 * from pushing block time ahead of the wall clock (authorizations would read as expired).
 * Blocks come on every transaction (automine) and also every `blockIntervalMs` (EDR mines them
 * on its own thread, which holds no Node handle; `stop()` turns it off all the same).
 */
export async function startEvmChain(host: string, options: EvmChainOptions = {}): Promise<EvmChain> {
  const require = createRequire(import.meta.url);
  const { createHardhatNetworkProvider, getGlobalEdrContext } =
    require("hardhat/internal/hardhat-network/provider/provider") as {
      createHardhatNetworkProvider(config: unknown, logger: { enabled: boolean }): Promise<EIP1193Provider>;
      getGlobalEdrContext(): Promise<unknown>;
    };
  // Hardhat keeps one EDR context per process and hands it out before its provider factory is
  // registered: a second chain started meanwhile failed with "Provider for provided chain type
  // does not exist" (2 in 14 starts of two devnets at once). Every chain waits for the one
  // registration.
  edrContext ??= getGlobalEdrContext();
  await edrContext;
  const { JsonRpcServer } = require("hardhat/internal/hardhat-network/jsonrpc/server") as {
    JsonRpcServer: new (config: {
      hostname: string;
      port: number;
      provider: EIP1193Provider;
    }) => HardhatJsonRpcServer;
  };
  const wallets = evmWallets();
  const provider = await createHardhatNetworkProvider(
    {
      hardfork: "cancun",
      chainId: EVM_CHAIN_ID,
      networkId: EVM_CHAIN_ID,
      blockGasLimit: 30_000_000,
      minGasPrice: 0n,
      automine: true,
      intervalMining: options.blockIntervalMs ?? DEFAULT_BLOCK_INTERVAL_MS,
      mempoolOrder: "priority",
      chains: new Map(),
      genesisAccounts: [DEPLOYER_KEY, ...wallets.map((w) => w.privateKey)].map((privateKey) => ({
        privateKey,
        balance: GAS_ETH_WEI.toString(),
      })),
      allowUnlimitedContractSize: false,
      throwOnTransactionFailures: true,
      throwOnCallFailures: true,
      allowBlocksWithSameTimestamp: true,
      enableTransientStorage: false,
      enableRip7212: false,
    },
    { enabled: false },
  );
  const usdc = await deployContracts(provider, wallets);
  const minting = new PromiseQueue(); // one deployer nonce
  const server = new JsonRpcServer({ hostname: host, port: 0, provider });
  const { port } = await server.listen();
  let stopped: Promise<void> | undefined;
  return {
    rpcUrl: `http://${urlHost(host)}:${port}`,
    usdc,
    provider,
    wallets,
    fund: (address, usdcAtomic) =>
      minting.run(async () => {
        await rawRequest(provider, "hardhat_setBalance", [address, `0x${GAS_ETH_WEI.toString(16)}`]);
        if (usdcAtomic > 0n) await mint(provider, usdc, address, usdcAtomic);
      }),
    stop() {
      stopped ??= (async () => {
        await rawRequest(provider, "evm_setIntervalMining", [0]).catch(() => {});
        const closing = server.close();
        server._httpServer.closeAllConnections();
        await closing;
      })();
      return stopped;
    },
  };
}

async function deployContracts(
  provider: EIP1193Provider,
  wallets: ReturnType<typeof evmWallets>,
): Promise<Address> {
  const { contracts } = loadArtifacts();
  const client = createWalletClient({
    account: privateKeyToAccount(DEPLOYER_KEY),
    chain: hardhat,
    transport: custom(provider),
  }).extend(publicActions);
  await rawRequest(provider, "hardhat_setCode", [MULTICALL3_ADDRESS, contracts.Multicall3.deployedBytecode]);
  const deployHash = await client.deployContract({
    abi: contracts.DevUSDC.abi,
    bytecode: contracts.DevUSDC.bytecode,
  });
  const receipt = await client.waitForTransactionReceipt({ hash: deployHash });
  const usdc = receipt.contractAddress;
  if (!usdc) throw new Error("DevUSDC deployment produced no contract address");
  for (const wallet of wallets) {
    if (wallet.usdcAtomic > 0n) await mint(provider, usdc, wallet.address, wallet.usdcAtomic);
  }
  return usdc;
}

/** Mints `amount` of the token to `to` from the deployer (the token's owner), and waits for it. */
async function mint(provider: EIP1193Provider, usdc: Address, to: Address, amount: bigint): Promise<void> {
  const client = createWalletClient({
    account: privateKeyToAccount(DEPLOYER_KEY),
    chain: hardhat,
    transport: custom(provider),
  }).extend(publicActions);
  const hash: Hex = await client.writeContract({
    address: usdc,
    abi: loadArtifacts().contracts.DevUSDC.abi,
    functionName: "mint",
    args: [to, amount],
  });
  await client.waitForTransactionReceipt({ hash });
}

/** Calls a node-specific JSON-RPC method that viem's typed provider does not know. */
export function rawRequest(provider: EIP1193Provider, method: string, params: unknown[]): Promise<unknown> {
  const loose = provider as unknown as {
    request(args: { method: string; params: unknown[] }): Promise<unknown>;
  };
  return loose.request({ method, params });
}

/** Brackets IPv6 literals for use in a URL. */
export function urlHost(host: string): string {
  return host.includes(":") ? `[${host}]` : host;
}
