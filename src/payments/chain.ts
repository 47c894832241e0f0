import { createPublicClient, erc20Abi, http, type PublicClient, parseAbi } from "viem";
import type { Wallet } from "../protocol/index.js";

/**
 * Read-only chain access for the payment pipeline: balances before signing, and what the
 * reconciler needs to resolve an unclear payment (EVM: was the EIP-3009 authorization used, and by
 * which transaction). No keys here.
 */
export interface ChainReader {
  /** Whether a wallet of this kind can pay on `network` (a CAIP-2 id of its chain family). */
  walletCanUse(wallet: Wallet, network: string): boolean;
  /** Token balance of `owner` in atomic units. */
  balance(network: string, asset: string, owner: string): Promise<bigint>;
  /** EVM only: the transaction that used an EIP-3009 authorization, or null when it is still unused. */
  evmAuthorizationUse(
    network: string,
    asset: string,
    authorizer: string,
    nonce: string,
  ): Promise<{ used: false } | { used: true; txHash: string | null }>;
  /** Seconds since epoch of the chain's latest block (EVM), for validBefore checks. */
  evmNow(network: string): Promise<bigint>;
}

const eip3009 = parseAbi([
  "function authorizationState(address authorizer, bytes32 nonce) view returns (bool)",
  "event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)",
]);

export function createChainReader(rpcUrls: Record<string, string>): ChainReader {
  const evmClients = new Map<string, PublicClient>();
  const evm = (network: string): PublicClient => {
    let client = evmClients.get(network);
    if (!client) {
      const url = rpcUrls[network];
      if (!url) throw new Error(`no RPC URL configured for ${network}`);
      client = createPublicClient({ transport: http(url, { timeout: 5000, retryCount: 1 }) });
      evmClients.set(network, client);
    }
    return client;
  };

  return {
    walletCanUse(wallet, network) {
      return network.startsWith(wallet.chain === "evm" ? "eip155:" : "solana:");
    },

    async balance(network, asset, owner) {
      if (network.startsWith("eip155:")) {
        return evm(network).readContract({
          address: asset as `0x${string}`,
          abi: erc20Abi,
          functionName: "balanceOf",
          args: [owner as `0x${string}`],
        });
      }
      const url = rpcUrls[network];
      if (!url) throw new Error(`no RPC URL configured for ${network}`);
      const response = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "getTokenAccountsByOwner",
          params: [owner, { mint: asset }, { encoding: "jsonParsed", commitment: "confirmed" }],
        }),
        signal: AbortSignal.timeout(5000),
      });
      const body = (await response.json()) as {
        result?: {
          value: Array<{ account: { data: { parsed: { info: { tokenAmount: { amount: string } } } } } }>;
        };
      };
      if (!body.result) throw new Error("the Solana RPC did not answer getTokenAccountsByOwner");
      return body.result.value.reduce(
        (sum, a) => sum + BigInt(a.account.data.parsed.info.tokenAmount.amount),
        0n,
      );
    },

    async evmAuthorizationUse(network, asset, authorizer, nonce) {
      const client = evm(network);
      const used = await client.readContract({
        address: asset as `0x${string}`,
        abi: eip3009,
        functionName: "authorizationState",
        args: [authorizer as `0x${string}`, nonce as `0x${string}`],
      });
      if (!used) return { used: false };
      // Used is what matters; the transaction is a courtesy, and many RPCs refuse wide log ranges.
      const logs = await client
        .getLogs({
          address: asset as `0x${string}`,
          event: eip3009[1],
          args: { authorizer: authorizer as `0x${string}`, nonce: nonce as `0x${string}` },
          fromBlock: "earliest",
        })
        .catch(() => []);
      return { used: true, txHash: logs[0]?.transactionHash ?? null };
    },

    async evmNow(network) {
      const block = await evm(network).getBlock({ blockTag: "latest" });
      return block.timestamp;
    },
  };
}
