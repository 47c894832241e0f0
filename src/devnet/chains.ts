import { type EvmChain, type EvmChainOptions, startEvmChain } from "./evm/chain.js";
import { errorMessage } from "./facilitator/app.js";
import { loadLiteSvm, type SolanaNode, type SolanaNodeOptions, startSolanaNode } from "./solana/node.js";

/**
 * The devnet's two chains, started side by side: the EVM chain always, the Solana node when
 * LiteSVM's native module loads on this platform and it is not turned off (a devnet without it
 * still pays on EVM).
 */

export interface DevnetChains {
  evm: EvmChain;
  solana: SolanaNode | null;
  /** Why there is no Solana node. */
  solanaUnavailable?: string;
}

export interface ChainsWanted {
  evmChain?: EvmChainOptions;
  /** true: Solana or fail; false: none; undefined: when available. */
  solana?: boolean;
  solanaNode?: SolanaNodeOptions;
  /** The devnet's log (the EVM chain tells its renewals there). */
  log?: (line: string) => void;
}

/** Both chains, or the first failure; `onStop` gets the stop of each that started, even then. */
export async function startChains(
  host: string,
  wanted: ChainsWanted,
  onStop: (stop: () => Promise<void>) => void,
): Promise<DevnetChains> {
  const [evmResult, solanaResult] = await Promise.allSettled([
    startEvmChain(host, { ...(wanted.log ? { log: wanted.log } : {}), ...wanted.evmChain }),
    startSolana(wanted.solana, wanted.solanaNode),
  ]);
  if (evmResult.status === "fulfilled") onStop(() => evmResult.value.stop());
  if (solanaResult.status === "fulfilled" && "node" in solanaResult.value) {
    const { node } = solanaResult.value;
    onStop(() => node.stop());
  }
  if (evmResult.status === "rejected") throw evmResult.reason;
  if (solanaResult.status === "rejected") throw solanaResult.reason;
  const evm = evmResult.value;
  return "node" in solanaResult.value
    ? { evm, solana: solanaResult.value.node }
    : { evm, solana: null, solanaUnavailable: solanaResult.value.reason };
}

async function startSolana(
  wanted: boolean | undefined,
  nodeOptions?: SolanaNodeOptions,
): Promise<{ node: SolanaNode } | { reason: string }> {
  if (wanted === false) return { reason: "disabled by option (solana: false)" };
  const loaded = loadLiteSvm();
  if ("reason" in loaded) {
    if (wanted === true) throw new Error(`Solana requested but unavailable: ${loaded.reason}`);
    return loaded;
  }
  try {
    return { node: await startSolanaNode(loaded.binding, nodeOptions) };
  } catch (error) {
    if (wanted === true) throw error;
    return { reason: `the Solana node failed to start: ${errorMessage(error)}` };
  }
}

export function walletOf(evm: EvmChain, name: string) {
  const wallet = evm.wallets.find((w) => w.name === name);
  if (!wallet) throw new Error(`no EVM wallet ${name}`);
  return wallet;
}

export function solanaWalletOf(node: SolanaNode, name: string) {
  const wallet = node.wallets.find((w) => w.name === name);
  if (!wallet) throw new Error(`no Solana wallet ${name}`);
  return wallet;
}
