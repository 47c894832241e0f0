import { createKeyPairSignerFromBytes, createSolanaRpc } from "@solana/kit";
import { x402Facilitator } from "@x402/core/facilitator";
import type { Network } from "@x402/core/types";
import { toFacilitatorEvmSigner } from "@x402/evm";
import { ExactEvmScheme } from "@x402/evm/exact/facilitator";
import { ExactEvmSchemeV1 } from "@x402/evm/exact/v1/facilitator";
import { EVM_NETWORK_CHAIN_ID_MAP } from "@x402/evm/v1";
import { toFacilitatorSvmSigner, V1_TO_V2_NETWORK_MAP } from "@x402/svm";
import { ExactSvmScheme } from "@x402/svm/exact/facilitator";
import { ExactSvmSchemeV1 } from "@x402/svm/exact/v1/facilitator";
import { createWalletClient, defineChain, http, publicActions } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { PromiseQueue } from "../queue.js";

/** What the facilitator needs to know about the EVM chain. */
export interface EvmFacilitatorConfig {
  network: `eip155:${number}`;
  chainId: number;
  rpcUrl: string;
  privateKey: `0x${string}`;
  /**
   * The x402 v1 name this chain also answers to (e.g. `base-sepolia`). v1 names stand for public
   * chains and v1 signatures bind that chain's id, so the name must be one whose chain id this
   * chain really has; otherwise nothing v1 could settle here and it is refused.
   */
  v1Network?: string;
}

/** What the facilitator needs to know about the Solana node. */
export interface SvmFacilitatorConfig {
  network: `solana:${string}`;
  rpcUrl: string;
  /** 64-byte secret key of the fee payer. */
  secretKey: Uint8Array;
}

/**
 * Builds `@x402/core`'s facilitator with the "exact" scheme on each chain, for x402 v2 and for v1
 * (the Solana node under its v1 name, e.g. `solana-devnet`; an EVM chain under `v1Network` when
 * it has one). Every EVM transaction the facilitator submits goes through one queue per chain:
 * concurrent settlements would otherwise read the same account nonce and collide.
 */
export async function createFacilitator(
  evm: EvmFacilitatorConfig | EvmFacilitatorConfig[],
  svm: SvmFacilitatorConfig | null,
): Promise<x402Facilitator> {
  const facilitator = new x402Facilitator();
  for (const chain of Array.isArray(evm) ? evm : [evm]) {
    const signer = evmSigner(chain);
    facilitator.register(chain.network, new ExactEvmScheme(signer));
    if (chain.v1Network !== undefined) {
      const v1ChainId = (EVM_NETWORK_CHAIN_ID_MAP as Record<string, number>)[chain.v1Network];
      if (v1ChainId !== chain.chainId) {
        throw new Error(
          `EVM chain ${chain.chainId} cannot answer to the x402 v1 name ${chain.v1Network} (chain id ${v1ChainId ?? "unknown"})`,
        );
      }
      facilitator.registerV1(chain.v1Network as Network, new ExactEvmSchemeV1(signer));
    }
  }
  if (svm) {
    // The v1 scheme asks for RPC by the v1 name, the v2 one by CAIP-2 id: both map to the node
    // (an unmapped name would silently fall back to a public RPC).
    const v1Name = Object.entries(V1_TO_V2_NETWORK_MAP).find(([, caip2]) => caip2 === svm.network)?.[0];
    const rpc = createSolanaRpc(svm.rpcUrl);
    const keypair = await createKeyPairSignerFromBytes(svm.secretKey);
    // No queue here: a Solana transaction carries its own blockhash and no account sequence, so
    // concurrent settlements cannot collide. Queued, every send waited for the previous one's
    // answer to be read by this process's event loop: once that loop lagged, sends fell behind
    // the payments and the queue grew without end (docs/devnet.md, "How long it lasts").
    const signer = toFacilitatorSvmSigner(keypair, {
      [svm.network]: rpc,
      ...(v1Name ? { [v1Name]: rpc } : {}),
    });
    facilitator.register(svm.network, new ExactSvmScheme(signer));
    if (v1Name) facilitator.registerV1(v1Name as Network, new ExactSvmSchemeV1(signer));
  }
  return facilitator;
}

function evmSigner(config: EvmFacilitatorConfig) {
  const account = privateKeyToAccount(config.privateKey);
  const chain = defineChain({
    id: config.chainId,
    name: "x402 devnet",
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [config.rpcUrl] } },
  });
  const client = createWalletClient({ account, chain, transport: http(config.rpcUrl) }).extend(publicActions);
  const queue = new PromiseQueue();
  // The x402 signer port is looser than viem's generics; these casts only bridge the types.
  type Loose = Parameters<typeof client.readContract>[0];
  return toFacilitatorEvmSigner({
    address: account.address,
    readContract: (args) => client.readContract(args as Loose),
    verifyTypedData: (args) => client.verifyTypedData(args as Parameters<typeof client.verifyTypedData>[0]),
    writeContract: (args) =>
      queue.run(() => client.writeContract(args as Parameters<typeof client.writeContract>[0])),
    sendTransaction: (args) => queue.run(() => client.sendTransaction(args)),
    waitForTransactionReceipt: (args) => client.waitForTransactionReceipt(args),
    getCode: (args) => client.getCode(args),
  });
}
