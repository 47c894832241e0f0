import { DEFAULT_ASSETS } from "@x402/evm";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { EVM_NETWORK_CHAIN_ID_MAP, ExactEvmSchemeV1 } from "@x402/evm/v1";
import {
  createPublicClient,
  erc20Abi,
  getAddress,
  http,
  isAddress,
  isErc6492Signature,
  type PublicClient,
  parseAbi,
  parseErc6492Signature,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { z } from "zod/v4";
import { evmWalletChecks } from "./evm-wallets.js";
import {
  type ChainFamily,
  ChainUnreadable,
  type PaymentOnChain,
  WalletAnswerMismatch,
  WalletCannotPay,
  type WalletSigningRequest,
} from "./types.js";

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

/** What the stand-in signer returns: 65 zero bytes, replaced by the wallet's signature on approval. */
const NO_SIGNATURE = `0x${"00".repeat(65)}` as const;

/** Half the secp256k1 group order: a canonical signature's s is at most this. */
const HALF_ORDER = 0x7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0n;

/** Seconds kept in hand after an approval to submit the payment before `validBefore`. */
const SUBMIT_MARGIN_SECONDS = 10;

const EIP712_DOMAIN_TYPES = [
  { name: "name", type: "string" },
  { name: "version", type: "string" },
  { name: "chainId", type: "uint256" },
  { name: "verifyingContract", type: "address" },
];

type TypedData = Extract<WalletSigningRequest, { kind: "evm-typed-data" }>["typedData"];

/** JSON for eth_signTypedData_v4: bigints as decimal strings, the domain's type spelled out. */
function toWalletTypedData(data: {
  domain: Record<string, unknown>;
  types: Record<string, unknown>;
  primaryType: string;
  message: Record<string, unknown>;
}): TypedData {
  const plain = (record: Record<string, unknown>) =>
    Object.fromEntries(Object.entries(record).map(([k, v]) => [k, typeof v === "bigint" ? v.toString() : v]));
  const domain = plain(data.domain);
  if (domain.chainId !== undefined) domain.chainId = Number(domain.chainId);
  return {
    domain,
    types: {
      EIP712Domain: EIP712_DOMAIN_TYPES,
      ...(data.types as TypedData["types"]),
    },
    primaryType: data.primaryType,
    message: plain(data.message),
  };
}

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
    return { ok: true, address: getAddress(input.toLowerCase()) };
  },

  canonicalAsset: (asset) => asset.toLowerCase(),

  keySchema: z.strictObject({
    chain: z.literal("evm"),
    privateKey: z
      .string()
      .regex(/^0x[0-9a-fA-F]{64}$/, "a 32-byte hex private key")
      .transform((k) => k as `0x${string}`),
    tokens: z.array(z.string().min(16)).min(1),
  }),

  async loadKey(key) {
    const account = privateKeyToAccount(key.privateKey);
    return {
      address: account.address,
      // The v1 scheme signs for the chain its v1 network name stands for; it reads nothing.
      schemesFor: (_network, rpcUrl) => ({
        v2: new ExactEvmScheme(account, rpcUrl ? { rpcUrl } : undefined),
        v1: new ExactEvmSchemeV1(account),
      }),
    };
  },

  connect(rpcUrl) {
    const client = publicClient(rpcUrl);
    return {
      wallets: evmWalletChecks(client),
      balance: (asset, owner) =>
        client.readContract({
          address: asset as `0x${string}`,
          abi: erc20Abi,
          functionName: "balanceOf",
          args: [owner as `0x${string}`],
        }),

      // The authorization's nonce used on chain: settled (with the transaction when the logs say).
      // Unused in a block whose own timestamp is past `validBefore` (chain time, never the server's
      // clock): it can never be used any more. Both are read at that one block, so a use landing
      // between two reads cannot be mistaken for expiry.
      async resolve(payment) {
        const auth = evmAuthorization(payment);
        if (!auth) return { status: "pending" };
        const block = await client.getBlock({ blockTag: "latest" });
        const used = await client.readContract({
          address: payment.asset as `0x${string}`,
          abi: eip3009,
          functionName: "authorizationState",
          args: [auth.from as `0x${string}`, auth.nonce as `0x${string}`],
          blockNumber: block.number,
        });
        if (used) {
          // Used is what matters; the transaction is a courtesy, and many RPCs refuse wide log ranges.
          const logs = await client
            .getLogs({
              address: payment.asset as `0x${string}`,
              event: eip3009[1],
              args: { authorizer: auth.from as `0x${string}`, nonce: auth.nonce as `0x${string}` },
              fromBlock: "earliest",
            })
            .catch(() => []);
          const txHash = logs[0]?.transactionHash;
          return { status: "settled", payer: auth.from, ...(txHash ? { txHash } : {}) };
        }
        if (block.timestamp > BigInt(auth.validBefore))
          return { status: "failed", error: "authorization expired unused" };
        return { status: "pending" };
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
    if (String(auth.to).toLowerCase() !== expected.payTo.toLowerCase()) {
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

  // The SDK's exact scheme builds the EIP-3009 authorization and asks its signer for the EIP-712
  // signature: the stand-in keeps the typed data and answers with an empty signature.
  draftForWallet(address, network, rpcUrl) {
    let recorded: TypedData | undefined;
    const signer = {
      address: getAddress(address),
      async signTypedData(data: {
        domain: Record<string, unknown>;
        types: Record<string, unknown>;
        primaryType: string;
        message: Record<string, unknown>;
      }) {
        recorded = toWalletTypedData(data);
        return NO_SIGNATURE;
      },
    };
    return {
      schemes: { v2: new ExactEvmScheme(signer), v1: new ExactEvmSchemeV1(signer) },
      request() {
        if (!recorded) throw new Error("the EVM scheme asked for no signature");
        return { kind: "evm-typed-data", method: "eth_signTypedData_v4", typedData: recorded };
      },
      expiresAt(payload) {
        const auth = (payload.payload as { authorization?: { validBefore?: unknown } }).authorization;
        return Number(auth?.validBefore) - SUBMIT_MARGIN_SECONDS;
      },
      // A contract wallet is not asked to sign for a token that could not check its signature.
      ...(rpcUrl
        ? {
            assertCanPay: (asset: string) =>
              evmWalletChecks(publicClient(rpcUrl), network).assertCanPay(asset, address),
          }
        : {}),
    };
  },

  // The signature must be the wallet's over exactly the stored typed data, as the chain judges it
  // (viem's verifyTypedData: an EOA's ECDSA signature, a deployed contract wallet's EIP-1271
  // answer, an EIP-6492 wrapper), and that typed data must be the stored authorization: then it
  // goes where the SDK put the empty one. A contract wallet must be deployed, and the token must
  // check contract signatures (EIP-1271), or the signature could never move the funds.
  async completeForWallet(payload, request, answer, wallet, chain) {
    if (request.kind !== "evm-typed-data" || !("signature" in answer)) {
      throw new WalletAnswerMismatch("an EVM payment is approved with a signature of its typed data");
    }
    const inner = payload.payload as { authorization?: Record<string, unknown>; signature?: unknown };
    const auth = inner.authorization;
    const message = request.typedData.message;
    if (
      !auth ||
      ["from", "to", "value", "validAfter", "validBefore", "nonce"].some(
        (k) => String(auth[k]).toLowerCase() !== String(message[k]).toLowerCase(),
      )
    ) {
      throw new WalletAnswerMismatch("the stored payment and its typed data differ");
    }
    const checks = chain?.wallets;
    // From the typed data: an x402 v1 payload has no `accepted`.
    const network = `eip155:${Number(request.typedData.domain.chainId)}`;
    if (!checks) throw new ChainUnreadable(`no RPC endpoint is configured for ${network}`);
    const asset = String(request.typedData.domain.verifyingContract);
    const notSigned = () =>
      new WalletAnswerMismatch(
        "the signature was not made by this wallet over the stored terms (amount, payee, nonce, validity)",
      );
    const isContract = await checks.isContract(wallet);
    let signature = answer.signature;
    if (isErc6492Signature(signature)) {
      if (!(await checks.verifyTypedData(request.typedData, signature, wallet))) throw notSigned();
      // Settling would first need the facilitator to deploy the wallet, which a seller's
      // facilitator does only for factories it allows: refused rather than signed away.
      if (!isContract) {
        throw new WalletCannotPay(
          "wallet_not_deployed",
          `This smart-contract wallet is not deployed on ${network} yet (the signature is an EIP-6492 one), and a payment cannot deploy it. Deploy the wallet (send any transaction from it), then approve again.`,
        );
      }
      // Deployed: the token checks the wallet's own signature through EIP-1271.
      signature = parseErc6492Signature(signature).signature;
    }
    if (signature.length === 132) {
      // The facilitator sends a 65-byte signature as (v, r, s): v must be 27/28 (or 0/1). And an
      // EOA's must be canonical: the token refuses a high-s one (malleability), which would fail
      // on chain after the approval was used up.
      const s = BigInt(`0x${signature.slice(66, 130)}`);
      const v = Number.parseInt(signature.slice(130, 132), 16);
      if ((!isContract && s > HALF_ORDER) || ![0, 1, 27, 28].includes(v)) {
        throw new WalletAnswerMismatch("the signature is not in canonical form (low s, v of 27 or 28)");
      }
    }
    if (!(await checks.verifyTypedData(request.typedData, signature, wallet))) throw notSigned();
    if (isContract) await checks.assertCanPay(asset, wallet);
    return { ...payload, payload: { ...inner, signature } };
  },
};

/** A read-only client of one RPC endpoint, bounded in time. */
function publicClient(rpcUrl: string): PublicClient {
  return createPublicClient({ transport: http(rpcUrl, { timeout: 5000, retryCount: 1 }) });
}
