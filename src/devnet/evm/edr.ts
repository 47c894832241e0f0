import { type ChildProcess, spawn } from "node:child_process";
import { EventEmitter } from "node:events";
import { createRequire } from "node:module";
import type { EIP1193Provider } from "viem";
import { DEPLOYER_KEY, evmWallets } from "./accounts.js";

export const EVM_CHAIN_ID = 31337;
export const GAS_ETH_WEI = 10_000n * 10n ** 18n;

/** An EDR chain in a process of its own: EIP-1193 `request`, `pid`, and `close()` that ends it. */
export type EdrProvider = EIP1193Provider & { readonly pid: number; close(): Promise<void> };

/**
 * The chain process's program (CommonJS, run with `node -e`, so it needs no loader in development
 * and no file of its own beside the bundle in dist/): it starts Hardhat's EDR provider from the
 * config it is given and answers `{ id, method, params }` with `{ id, result }` or `{ id, error }`.
 * It exits when its parent goes (the IPC channel closes), even on kill -9; a signal sent to the
 * parent's process group does not reach it.
 */
const PROGRAM = `
const fail = (error) => ({
  message: String((error && error.message) || error),
  code: error && error.code,
  data: error && error.data,
  transactionHash: error && error.transactionHash,
  providerError: !!(error && error._isProviderError),
});
const post = (message) => {
  try { process.send(message); }
  catch { process.send({ id: message.id, error: { message: "unclonable answer", code: -32603 } }); }
};
process.on("disconnect", () => process.exit(0));
process.once("message", async ({ module, config }) => {
  try {
    const hardhat = require(module);
    config.minGasPrice = BigInt(config.minGasPrice);
    config.chains = new Map();
    const provider = await hardhat.createHardhatNetworkProvider(config, { enabled: false });
    provider.on("notification", (notification) => post({ notification }));
    process.on("message", ({ id, method, params }) => {
      provider.request({ method, params }).then(
        (result) => post({ id, result }),
        (error) => post({ id, error: fail(error) }),
      );
    });
    process.send({ ready: true });
  } catch (error) {
    process.send({ failed: fail(error).message });
  }
});
`;

interface Reply {
  id?: number;
  result?: unknown;
  error?: {
    message: string;
    code?: number;
    data?: unknown;
    transactionHash?: string;
    providerError?: boolean;
  };
  notification?: unknown;
  ready?: true;
  failed?: string;
}

/** What a chain process printed last on stderr, told when it ends unexpectedly. */
const STDERR_KEPT = 2_000;

/**
 * A fresh EDR chain (genesis: the deployer and the wallets with gas ETH, nothing else), with
 * automine and interval mining, in a child process of its own. Why a process: EDR keeps every
 * block and state in native memory and frees none of it when a provider is dropped, nor after
 * `hardhat_reset`, so the devnet renews its chain by starting a new one and ending the old
 * (renewal.ts; docs/devnet.md, "How long it lasts"). A worker thread frees it too, but EDR prints
 * to the process's stdout when a second one starts, and panicked once while a thread was torn
 * down; a process keeps both to itself. A call costs an IPC message each way (about 0.1 ms).
 */
export async function createEdrProvider(
  blockIntervalMs: number,
  options: EdrChainOptions = {},
): Promise<EdrProvider> {
  const module = createRequire(import.meta.url).resolve("hardhat/internal/hardhat-network/provider/provider");
  const child = spawn(process.execPath, ["-e", PROGRAM], {
    stdio: ["ignore", "ignore", "pipe", "ipc"],
    env: { ...process.env, NODE_OPTIONS: "" },
    // A process group of its own: Ctrl-C (SIGINT to the terminal's whole group) or a signal to the
    // service's group stops the service, which drains its payments, then ends the chain; the chain
    // must not die first under a payment in flight. It still ends with its parent (the IPC channel).
    detached: true,
  });
  const chain = new ChainProcess(child);
  child.send({ module, config: edrConfig(blockIntervalMs, options) });
  try {
    await chain.ready;
  } catch (error) {
    child.kill("SIGKILL");
    throw error;
  }
  // Like EDR in-process, the chain holds the parent's event loop open no more than its callers do.
  child.unref();
  child.channel?.unref();
  return chain as unknown as EdrProvider;
}

/** What a chain other than the devnet's own differs in (a test's chain posing as another network). */
export interface EdrChainOptions {
  /** Default {@link EVM_CHAIN_ID}. */
  chainId?: number;
  /** The accounts with gas ETH at genesis; default the deployer and the devnet's wallets. */
  genesisKeys?: readonly `0x${string}`[];
}

/** Hardhat's network config for the chain (bigints as strings: IPC carries JSON). */
function edrConfig(blockIntervalMs: number, { chainId = EVM_CHAIN_ID, genesisKeys }: EdrChainOptions) {
  return {
    hardfork: "cancun",
    chainId,
    networkId: chainId,
    blockGasLimit: 30_000_000,
    minGasPrice: "0", // made a bigint in the chain process
    automine: true,
    intervalMining: blockIntervalMs,
    mempoolOrder: "priority",
    genesisAccounts: (genesisKeys ?? [DEPLOYER_KEY, ...evmWallets().map((w) => w.privateKey)]).map(
      (privateKey) => ({
        privateKey,
        balance: GAS_ETH_WEI.toString(),
      }),
    ),
    allowUnlimitedContractSize: false,
    throwOnTransactionFailures: true,
    throwOnCallFailures: true,
    allowBlocksWithSameTimestamp: true,
    enableTransientStorage: false,
    enableRip7212: false,
  };
}

/** This side of a chain process: calls by id, their answers, its notifications and its end. */
class ChainProcess {
  readonly ready: Promise<void>;
  private readonly events = new EventEmitter();
  private readonly pending = new Map<
    number,
    { resolve(value: unknown): void; reject(error: unknown): void }
  >();
  private ended: Error | undefined;
  private nextId = 0;
  private stderr = "";
  private closing: Promise<void> | undefined;

  constructor(private readonly child: ChildProcess) {
    child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
      this.stderr = (this.stderr + chunk).slice(-STDERR_KEPT);
    });
    this.ready = new Promise<void>((resolve, reject) => {
      child.on("message", (reply: Reply) => {
        if (reply.ready) resolve();
        else if (reply.failed !== undefined) reject(new Error(`EDR did not start: ${reply.failed}`));
        else this.answer(reply);
      });
      child.on("error", (error) => {
        this.end(error);
        reject(error);
      });
      child.on("exit", (code, signal) => {
        const told = this.stderr.trim();
        this.end(
          new Error(`the EVM chain's process ended (${signal ?? `code ${code}`})${told ? `: ${told}` : ""}`),
        );
        reject(this.ended);
      });
    });
  }

  get pid(): number {
    return this.child.pid ?? 0;
  }

  request({ method, params }: { method: string; params?: unknown }): Promise<unknown> {
    if (this.ended) return Promise.reject(this.ended);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.child.send({ id, method, params });
    });
  }

  on(event: string, listener: (...args: unknown[]) => void): this {
    this.events.on(event, listener);
    return this;
  }

  addListener(event: string, listener: (...args: unknown[]) => void): this {
    return this.on(event, listener);
  }

  removeListener(event: string, listener: (...args: unknown[]) => void): this {
    this.events.removeListener(event, listener);
    return this;
  }

  /** Ends the process (nothing in it is worth keeping: its state is in memory only). */
  close(): Promise<void> {
    this.closing ??= (async () => {
      if (this.ended) return;
      const exited = new Promise<void>((resolve) => this.child.once("exit", () => resolve()));
      this.end(new Error("the EVM chain has stopped"));
      this.child.ref(); // until it has gone
      this.child.kill("SIGKILL");
      await exited;
    })();
    return this.closing;
  }

  private answer(reply: Reply): void {
    if (reply.notification !== undefined) {
      this.events.emit("notification", reply.notification);
      return;
    }
    const call = this.pending.get(reply.id ?? -1);
    if (!call) return;
    this.pending.delete(reply.id ?? -1);
    if (reply.error) call.reject(providerError(reply.error));
    else call.resolve(reply.result);
  }

  private end(error: Error): void {
    this.ended ??= error;
    for (const call of this.pending.values()) call.reject(this.ended);
    this.pending.clear();
  }
}

/** The chain process's error as Hardhat's JSON-RPC server expects a provider's (`_isProviderError`, code, data). */
function providerError(error: NonNullable<Reply["error"]>): Error {
  return Object.assign(new Error(error.message), {
    code: error.code,
    data: error.data,
    transactionHash: error.transactionHash,
    ...(error.providerError ? { _isProviderError: true } : {}),
  });
}

/** Calls a node-specific JSON-RPC method that viem's typed provider does not know. */
export function rawRequest(provider: EIP1193Provider, method: string, params: unknown[]): Promise<unknown> {
  const loose = provider as unknown as {
    request(args: { method: string; params: unknown[] }): Promise<unknown>;
  };
  return loose.request({ method, params });
}
