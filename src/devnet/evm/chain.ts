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
import { GatedProvider } from "./gate.js";
import { CarriedState, type Renewal, renewChain } from "./renewal.js";

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

/**
 * How many transactions the chain takes before it is renewed (renewal.ts: EDR keeps every block
 * and state; the state is carried over, the history dropped): about 25 MB of EDR's memory, every
 * 3-4 minutes at 5 EVM payments a second.
 */
export const DEFAULT_RENEW_EVERY = 1_000;

export interface EvmChainOptions {
  /** Interval mining period in ms besides automine; 0 turns it off. Default {@link DEFAULT_BLOCK_INTERVAL_MS}. */
  blockIntervalMs?: number;
  /** Renew the chain after this many transactions; 0 never. Default {@link DEFAULT_RENEW_EVERY}. */
  renewEvery?: number;
  /** Where a renewal, or the reason the chain can no longer be renewed, is told. */
  log?: (line: string) => void;
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
  /**
   * Renews the chain now (it also happens on its own every `renewEvery` transactions): the
   * answer, or why not (something it cannot carry over, or receipts still awaited).
   */
  renew(): Promise<Renewal | { skipped: string }>;
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
  const gate = new GatedProvider(provider, {
    token: usdc,
    code: new Set([usdc.toLowerCase(), MULTICALL3_ADDRESS.toLowerCase()]),
  });
  const gated = gate.asProvider();
  const funded = new Set<Address>();
  const renewer = startRenewer(gate, options, {
    token: usdc,
    codeOnly: [MULTICALL3_ADDRESS],
    accounts: () => [privateKeyToAccount(DEPLOYER_KEY).address, ...wallets.map((w) => w.address), ...funded],
  });
  const minting = new PromiseQueue(); // one deployer nonce
  const server = new JsonRpcServer({ hostname: host, port: 0, provider: gated });
  const { port } = await server.listen();
  let stopped: Promise<void> | undefined;
  return {
    rpcUrl: `http://${urlHost(host)}:${port}`,
    usdc,
    provider: gated,
    wallets,
    fund: (address, usdcAtomic) =>
      minting.run(async () => {
        funded.add(address);
        await rawRequest(gated, "hardhat_setBalance", [address, `0x${GAS_ETH_WEI.toString(16)}`]);
        if (usdcAtomic > 0n) await mint(gated, usdc, address, usdcAtomic);
      }),
    renew: renewer.renew,
    stop() {
      stopped ??= (async () => {
        renewer.stop();
        await rawRequest(provider, "evm_setIntervalMining", [0]).catch(() => {});
        const closing = server.close();
        server._httpServer.closeAllConnections();
        await closing;
      })();
      return stopped;
    },
  };
}

/** How often the chain checks whether it is due for renewal. */
const RENEW_CHECK_MS = 2_000;
/** How long a renewal waits for the receipts of transactions sent before it. */
const RENEW_DRAIN_MS = 5_000;

/** Renews the chain every `renewEvery` transactions, one renewal at a time, on an unref'd timer. */
function startRenewer(gate: GatedProvider, options: EvmChainOptions, plan: Parameters<typeof renewChain>[1]) {
  const every = options.renewEvery ?? DEFAULT_RENEW_EVERY;
  const carried = new CarriedState();
  let running: Promise<Renewal | { skipped: string }> | undefined;
  let told = false;
  const renew = () => {
    running ??= (async () => {
      if (gate.foreign) return { skipped: gate.foreign };
      if (!(await gate.close(RENEW_DRAIN_MS))) return { skipped: "receipts still awaited" };
      try {
        const done = await renewChain(gate, plan, carried);
        options.log?.(
          `devnet: EVM chain renewed after ${done.transactions} transactions (${done.slots} token slots, ${done.accounts} accounts carried, ${done.ms.toFixed(0)} ms)`,
        );
        return done;
      } catch (error) {
        gate.foreign ??= `a renewal failed: ${error instanceof Error ? error.message : String(error)}`;
        return { skipped: gate.foreign };
      } finally {
        gate.open();
      }
    })().finally(() => {
      running = undefined;
    });
    return running;
  };
  const timer = setInterval(() => {
    if (every <= 0 || gate.sent < every || running) return;
    if (gate.foreign) {
      if (!told) options.log?.(`devnet: EVM chain no longer renewed (${gate.foreign}); its memory grows`);
      told = true;
      return;
    }
    void renew();
  }, RENEW_CHECK_MS);
  timer.unref();
  return { renew, stop: () => clearInterval(timer) };
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
