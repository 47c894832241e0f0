import type { Server } from "node:http";
import { createRequire } from "node:module";
import type { Address, EIP1193Provider } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { PromiseQueue } from "../queue.js";
import { DEPLOYER_KEY, evmWallets } from "./accounts.js";
import { createEdrProvider, EVM_CHAIN_ID, GAS_ETH_WEI, rawRequest } from "./edr.js";
import { GatedProvider } from "./gate.js";
import { CarriedState, type Renewal, renewChain } from "./renewal.js";
import { deployContracts, MULTICALL3_ADDRESS, mint } from "./token.js";

export { createEdrProvider, EVM_CHAIN_ID, rawRequest } from "./edr.js";
export { MULTICALL3_ADDRESS } from "./token.js";
export const EVM_NETWORK = `eip155:${EVM_CHAIN_ID}` as const;
/** EIP-712 domain of the token, equal to Circle's USDC so the "exact" scheme's defaults apply. */
export const USDC_DOMAIN = { name: "USD Coin", version: "2" } as const;
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

/** A running local EVM chain with the token deployed and the wallets funded. */
export interface EvmChain {
  rpcUrl: string;
  usdc: Address;
  /** The chain's EIP-1193 provider, through the gate, without HTTP (setup and balance reads). */
  provider: EIP1193Provider;
  wallets: ReturnType<typeof evmWallets>;
  /** The id of the process EDR runs in (edr.ts); a renewal starts another. */
  readonly pid: number;
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
 * Starts Hardhat 2's EDR node in a process of its own (edr.ts: it ends with this one, even on
 * kill -9) and serves it over JSON-RPC from this process on `host`, port 0, through the gate that
 * renews it (renewal.ts). `allowBlocksWithSameTimestamp` keeps bursts of payments from pushing
 * block time ahead of the wall clock (authorizations would read as expired). Blocks come on every
 * transaction (automine) and also every `blockIntervalMs`; `stop()` ends the chain's process.
 */
export async function startEvmChain(host: string, options: EvmChainOptions = {}): Promise<EvmChain> {
  const require = createRequire(import.meta.url);
  const { JsonRpcServer } = require("hardhat/internal/hardhat-network/jsonrpc/server") as {
    JsonRpcServer: new (config: {
      hostname: string;
      port: number;
      provider: EIP1193Provider;
    }) => HardhatJsonRpcServer;
  };
  const wallets = evmWallets();
  const blockIntervalMs = options.blockIntervalMs ?? DEFAULT_BLOCK_INTERVAL_MS;
  const provider = await createEdrProvider(blockIntervalMs);
  const usdc = await deployContracts(provider, wallets);
  const gate = new GatedProvider(provider, {
    token: usdc,
    // Multicall3's code is planted again on a new chain; the token's is deployed again, so code set
    // at its address (a test planting another variant) is something a renewal cannot carry.
    code: new Set([MULTICALL3_ADDRESS.toLowerCase()]),
  });
  const gated = gate.asProvider();
  const funded = new Set<Address>();
  const renewer = startRenewer(gate, options, {
    token: usdc,
    fresh: () => createEdrProvider(blockIntervalMs),
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
    get pid() {
      return gate.inner.pid;
    },
    fund: (address, usdcAtomic) =>
      minting.run(async () => {
        funded.add(address);
        await rawRequest(gated, "hardhat_setBalance", [address, `0x${GAS_ETH_WEI.toString(16)}`]);
        if (usdcAtomic > 0n) await mint(gated, usdc, address, usdcAtomic);
      }),
    renew: renewer.renew,
    stop() {
      stopped ??= (async () => {
        await renewer.stop();
        const closing = server.close();
        server._httpServer.closeAllConnections();
        await closing;
        await gate.inner.close();
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
  const stop = async () => {
    clearInterval(timer);
    await running?.catch(() => {});
  };
  return { renew, stop };
}

/** Brackets IPv6 literals for use in a URL. */
export function urlHost(host: string): string {
  return host.includes(":") ? `[${host}]` : host;
}
