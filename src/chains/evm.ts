import { DEFAULT_ASSETS } from "@x402/evm";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { EVM_NETWORK_CHAIN_ID_MAP, ExactEvmSchemeV1 } from "@x402/evm/v1";
import {
  erc20Abi,
  getAddress,
  isAddress,
  parseAbi,
  parseEventLogs,
  TransactionReceiptNotFoundError,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { z } from "zod/v4";
import { completeForWallet, draftForWallet } from "./evm-approval.js";
import { contractAddress, readTokenDomain, withTokenDomain } from "./evm-domain.js";
import { evmPublicClient, evmWalletChecks } from "./evm-wallets.js";
import type { ChainFamily, PaymentOnChain } from "./types.js";

/**
 * Ethereum-compatible chains (CAIP-2 `eip155:<chain id>`), paid with EIP-3009
 * `transferWithAuthorization` as the x402 exact scheme signs it (docs/payments.md).
 */

export interface EvmKey {
  chain: "evm";
  privateKey: `0x${string}`;
  tokens: string[];
}

const EVM_SHAPE = /^0x[0-9a-fA-F]{40}$/;

const eip3009 = parseAbi([
  "function authorizationState(address authorizer, bytes32 nonce) view returns (bool)",
  "event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)",
]);

interface EvmAuthorization {
  kind: "evm-eip3009";
  from: string;
  nonce: string;
  validBefore: string;
}

function evmAuthorization(payment: PaymentOnChain): EvmAuthorization | undefined {
  const a = payment.authorization as Partial<EvmAuthorization> | null;
  return a?.kind === "evm-eip3009" && a.from && a.nonce && a.validBefore
    ? (a as EvmAuthorization)
    : undefined;
}

/** Hex case carries no meaning in an address: a checksummed and a lowercase spelling are one account. */
const sameAddress = (a: string, b: string): boolean => a.toLowerCase() === b.toLowerCase();

/** The SDK's default stablecoins that are USDC-like here: 6 decimals, plain EIP-3009 transfers. */
function usdcTable(): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [network, assets] of Object.entries(DEFAULT_ASSETS)) {
    const plain = assets.filter((a) => a.decimals === 6 && !a.assetTransferMethod && /^USDC/.test(a.symbol));
    if (plain.length > 0) out[network] = plain.map((a) => a.asset);
  }
  return out;
}

export const evm: ChainFamily<EvmKey> = {
  name: "evm",
  namespace: "eip155",
  v1Networks: Object.freeze(
    Object.fromEntries(Object.entries(EVM_NETWORK_CHAIN_ID_MAP).map(([name, id]) => [name, `eip155:${id}`])),
  ),
  usdc: Object.freeze(usdcTable()),

  // 0x + 40 hex; when letters are mixed case the EIP-55 checksum must hold, so a single flipped
  // letter is caught. Returned checksummed.
  parseAddress(input) {
    if (!/^0x/i.test(input)) return undefined;
    if (!EVM_SHAPE.test(input))
      return { ok: false, reason: "an EVM address is 0x followed by 40 hex digits" };
    const digits = input.slice(2);
    const mixed = digits !== digits.toLowerCase() && digits !== digits.toUpperCase();
    if (mixed && !isAddress(input, { strict: true })) {
      return { ok: false, reason: "the EIP-55 checksum of this mixed-case EVM address does not match" };
    }
    if (/^0x0{40}$/i.test(input)) return { ok: false, reason: "the zero address is no one's wallet" };
    return { ok: true, address: getAddress(input.toLowerCase()) };
  },

  payeeProblem(payTo) {
    const parsed = this.parseAddress(payTo);
    return parsed?.ok ? undefined : (parsed?.reason ?? "an EVM address is 0x followed by 40 hex digits");
  },

  canonicalAsset: (asset) => asset.toLowerCase(),
  samePayee: sameAddress,

  keySchema: z.strictObject({
    chain: z.literal("evm"),
    privateKey: z
      .string()
      .regex(/^0x[0-9a-fA-F]{64}$/, "a 32-byte hex private key")
      .transform((k) => k as `0x${string}`),
    tokens: z.array(z.string().min(16)).min(1),
  }),

  keyFromSeed: (seed) => ({
    chain: "evm",
    privateKey: `0x${Buffer.from(seed).toString("hex")}`,
    tokens: ["a tab's session key: no token"],
  }),

  async loadKey(key) {
    const account = privateKeyToAccount(key.privateKey);
    return {
      address: account.address,
      // The v1 scheme signs for the chain its v1 network name stands for; it reads nothing.
      // Either signs only over the token's own EIP-712 domain (evm-domain.ts).
      schemesFor: (_network, rpcUrl) =>
        withTokenDomain(
          {
            v2: new ExactEvmScheme(account, rpcUrl ? { rpcUrl } : undefined),
            v1: new ExactEvmSchemeV1(account),
          },
          rpcUrl,
        ),
    };
  },

  connect(rpcUrl) {
    const client = evmPublicClient(rpcUrl);
    return {
      wallets: evmWalletChecks(client),
      transferExtra: async (asset) => ({ ...(await readTokenDomain(client, asset)) }),
      balance: (asset, owner) =>
        client.readContract({
          address: contractAddress(asset),
          abi: erc20Abi,
          functionName: "balanceOf",
          args: [owner as `0x${string}`],
        }),

      // The authorization's nonce used on chain (read at the head): settled, with the transaction
      // when the logs say. Failed only when a finalized block is past `validBefore` (chain time,
      // never the server's clock) and the head, read after it, still has the nonce unused: the
      // head descends from that block, so no block up to it used the nonce and no reorganisation
      // can bring one back, and every later block is past `validBefore`, so none can use it. All
      // reads are near the head (a full node keeps no older state). Finality lags the head (on an
      // L2, minutes): the payment stays counted as spent meanwhile.
      async resolve(payment) {
        const auth = evmAuthorization(payment);
        if (!auth) return { status: "pending" };
        const final = await client.getBlock({ blockTag: "finalized" });
        const head = await client.getBlock({ blockTag: "latest" });
        const used = await client.readContract({
          address: contractAddress(payment.asset),
          abi: eip3009,
          functionName: "authorizationState",
          args: [auth.from as `0x${string}`, auth.nonce as `0x${string}`],
          blockNumber: head.number,
        });
        if (used) {
          // Used is what matters; the transaction is a courtesy, and many RPCs refuse wide log ranges.
          const logs = await client
            .getLogs({
              address: contractAddress(payment.asset),
              event: eip3009[1],
              args: { authorizer: auth.from as `0x${string}`, nonce: auth.nonce as `0x${string}` },
              fromBlock: "earliest",
            })
            .catch(() => []);
          const txHash = logs[0]?.transactionHash;
          return { status: "settled", payer: auth.from, ...(txHash ? { txHash } : {}) };
        }
        // A head behind the finalized block (a load balancer's lagging node) proves nothing.
        if (final.timestamp > BigInt(auth.validBefore) && head.number >= final.number)
          return { status: "failed", error: "authorization expired unused" };
        return { status: "pending" };
      },

      // The claimed transaction's receipt: succeeded, and the token says it used this authorization.
      async confirm(payment, transaction) {
        const auth = evmAuthorization(payment);
        if (!auth || !/^0x[0-9a-fA-F]{64}$/.test(transaction)) return undefined;
        const receipt = await client
          .getTransactionReceipt({ hash: transaction as `0x${string}` })
          .catch((error: unknown) => {
            if (error instanceof TransactionReceiptNotFoundError) return undefined;
            throw error;
          });
        if (receipt?.status !== "success") return undefined;
        const used = parseEventLogs({
          abi: eip3009,
          eventName: "AuthorizationUsed",
          logs: receipt.logs,
        }).some(
          (log) =>
            sameAddress(log.address, payment.asset) &&
            sameAddress(log.args.authorizer, auth.from) &&
            log.args.nonce.toLowerCase() === auth.nonce.toLowerCase(),
        );
        return used ? { payer: auth.from } : undefined;
      },

      async ping() {
        await client.getBlockNumber({ cacheTime: 0 });
      },
    };
  },

  // The signed EIP-3009 authorization's value, recipient and window must be what was quoted.
  authorization(payload, expected, now) {
    const auth = (payload.payload as { authorization?: Record<string, unknown> }).authorization;
    if (!auth) throw new Error("the signed EVM payload is not an EIP-3009 authorization");
    if (BigInt(String(auth.value)) !== expected.amount)
      throw new Error("signed amount differs from the quote");
    if (!sameAddress(String(auth.to), expected.payTo)) {
      throw new Error("signed recipient differs from the quote");
    }
    const validBefore = Number(auth.validBefore);
    if (!(validBefore > now && validBefore <= now + expected.maxTimeoutSeconds + 5)) {
      throw new Error(`signed validBefore is outside the ${expected.maxTimeoutSeconds} s window`);
    }
    return {
      kind: "evm-eip3009",
      from: String(auth.from),
      nonce: String(auth.nonce),
      validBefore: String(auth.validBefore),
    };
  },

  // A payment the user's own wallet signs (evm-approval.ts).
  draftForWallet,
  completeForWallet,
};
