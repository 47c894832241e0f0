import { createPublicClient, erc20Abi, http, parseEventLogs } from "viem";
import type { Devnet } from "../src/devnet/index.js";

export interface Transfer {
  from: string;
  to: string;
  value: bigint;
}

/** The devnet USDC transfers an EVM transaction made, as the chain has them (addresses lower-case). */
export async function usdcTransfersOf(devnet: Devnet, hash: string): Promise<Transfer[]> {
  const client = createPublicClient({ transport: http(devnet.manifest.evm.rpcUrl) });
  const receipt = await client.getTransactionReceipt({ hash: hash as `0x${string}` });
  return parseEventLogs({ abi: erc20Abi, logs: receipt.logs, eventName: "Transfer" })
    .filter((log) => log.address.toLowerCase() === devnet.manifest.evm.usdc.toLowerCase())
    .map((log) => ({
      from: log.args.from.toLowerCase(),
      to: log.args.to.toLowerCase(),
      value: log.args.value,
    }));
}

/** A devnet wallet's EVM address by role (lower-case). */
export function evmAddressOf(devnet: Devnet, role: "payer" | "merchant"): string {
  const wallet = devnet.manifest.evm.wallets.find((w) => w.role === role);
  if (!wallet) throw new Error(`the devnet has no ${role}`);
  return wallet.address.toLowerCase();
}
