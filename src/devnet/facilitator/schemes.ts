import { createKeyPairSignerFromBytes, createSolanaRpc } from "@solana/kit";
import { x402Facilitator } from "@x402/core/facilitator";
import { toFacilitatorEvmSigner } from "@x402/evm";
import { ExactEvmScheme } from "@x402/evm/exact/facilitator";
import { toFacilitatorSvmSigner } from "@x402/svm";
import { ExactSvmScheme } from "@x402/svm/exact/facilitator";
import { createWalletClient, defineChain, http, publicActions } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { PromiseQueue } from "../queue.js";

/** What the facilitator needs to know about the EVM chain. */
export interface EvmFacilitatorConfig {
  network: `eip155:${number}`;
  chainId: number;
  rpcUrl: string;
  privateKey: `0x${string}`;
}

/** What the facilitator needs to know about the Solana node. */
export interface SvmFacilitatorConfig {
  network: `solana:${string}`;
  rpcUrl: string;
  /** 64-byte secret key of the fee payer. */
  secretKey: Uint8Array;
}

/**
 * Builds `@x402/core`'s facilitator with the "exact" scheme on each chain. Every transaction
 * the facilitator submits goes through one queue per chain: concurrent settlements would
 * otherwise read the same account nonce and collide.
 */
export async function createFacilitator(
  evm: EvmFacilitatorConfig,
  svm: SvmFacilitatorConfig | null,
): Promise<x402Facilitator> {
  const facilitator = new x402Facilitator();
  facilitator.register(evm.network, new ExactEvmScheme(evmSigner(evm)));
  if (svm) {
    const keypair = await createKeyPairSignerFromBytes(svm.secretKey);
    const base = toFacilitatorSvmSigner(keypair, { [svm.network]: createSolanaRpc(svm.rpcUrl) });
    const queue = new PromiseQueue();
    facilitator.register(
      svm.network,
      new ExactSvmScheme({
        ...base,
        sendTransaction: (tx, network) => queue.run(() => base.sendTransaction(tx, network)),
      }),
    );
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
