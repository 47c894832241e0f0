import {
  createPublicClient,
  encodeFunctionData,
  getAddress,
  type Hex,
  HttpRequestError,
  http,
  type PublicClient,
  parseAbi,
  TimeoutError,
} from "viem";
import { ChainUnreadable, WalletCannotPay, type WalletChecks, type WalletSigningRequest } from "./types.js";

/**
 * What an approval reads from an EVM chain about the wallet that signs (docs/payments.md,
 * "Smart-contract wallets"): is it a contract, does its signature hold (viem's `verifyTypedData`:
 * an EOA's ECDSA signature, a deployed wallet's EIP-1271 `isValidSignature`, an undeployed one's
 * EIP-6492 wrapper), and can the token accept a contract's signature at all.
 */

type TypedData = Extract<WalletSigningRequest, { kind: "evm-typed-data" }>["typedData"];

/** The overload FiatToken v2.2 added with ERC-1271 support (selector 0xcf092995). */
const bytesOverload = parseAbi([
  "function transferWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, bytes signature)",
]);

const ZERO_NONCE = `0x${"00".repeat(32)}` as const;

/** The typed data as viem hashes it: uint256 fields back to bigint, the domain type implied. */
export function forViem(data: TypedData) {
  const { EIP712Domain: _domain, ...types } = data.types;
  const fields = types[data.primaryType] ?? [];
  const message = Object.fromEntries(
    Object.entries(data.message).map(([k, v]) => {
      const type = fields.find((f) => f.name === k)?.type ?? "";
      return [k, /^u?int\d*$/.test(type) ? BigInt(String(v)) : v];
    }),
  );
  return {
    domain: { ...data.domain, chainId: Number(data.domain.chainId) },
    types,
    primaryType: data.primaryType,
    message,
  };
}

/** The errors viem raises when the endpoint itself failed (no answer, HTTP error, timeout). */
function transportFailed(error: unknown): boolean {
  for (let e: unknown = error; e instanceof Error; e = e.cause) {
    if (e instanceof HttpRequestError || e instanceof TimeoutError) return true;
  }
  return false;
}

/**
 * What an `eth_call` that failed says: reverted (with its revert data, possibly empty), or not a
 * revert at all (the endpoint failed, or refused the call for its own reasons).
 */
function revertOf(error: unknown): { data: Hex } | undefined {
  if (transportFailed(error)) return undefined;
  let data: Hex | undefined;
  let reverted = false;
  for (let e: unknown = error; e instanceof Error; e = e.cause) {
    const raw = (e as { data?: unknown }).data;
    // Geth answers the revert data as `data`; Hardhat as `data.data`.
    const hex = typeof raw === "string" ? raw : (raw as { data?: unknown } | undefined)?.data;
    if (typeof hex === "string" && /^0x([0-9a-fA-F]{2})*$/.test(hex)) data ??= hex as Hex;
    const text = `${e.message} ${(e as { details?: unknown }).details ?? ""}`;
    if (/revert/i.test(text)) reverted = true;
  }
  if (data !== undefined && data.length > 2) return { data };
  return reverted ? { data: data ?? "0x" } : undefined;
}

const describe = (network: string | undefined) => (network ? ` on ${network}` : "");

export function evmWalletChecks(client: PublicClient, network?: string): WalletChecks {
  const unreadable = (what: string) =>
    new ChainUnreadable(`could not ${what}${describe(network)}: the chain did not answer`);

  async function isContract(wallet: string): Promise<boolean> {
    const code = await client.getCode({ address: getAddress(wallet) }).catch(() => {
      throw unreadable("read the wallet");
    });
    return code !== undefined && code !== "0x";
  }

  /**
   * Whether the token checks a contract's signature through EIP-1271, told by the overload that
   * comes with it: a call that can never succeed (`validBefore` 0) reverts with the token's own
   * reason where the function exists, and without any data where it does not (no such selector,
   * as FiatToken v2.1 and older EIP-3009 tokens, behind a proxy too). A call that succeeds hit a
   * fallback: no such function either.
   */
  async function acceptsContractSignatures(asset: string, wallet: string): Promise<boolean> {
    const data = encodeFunctionData({
      abi: bytesOverload,
      functionName: "transferWithAuthorization",
      args: [getAddress(wallet), getAddress(wallet), 0n, 0n, 0n, ZERO_NONCE, "0x"],
    });
    try {
      await client.request({ method: "eth_call", params: [{ to: getAddress(asset), data }, "latest"] });
      return false;
    } catch (error) {
      const revert = revertOf(error);
      if (!revert) throw unreadable("read the token");
      return revert.data.length > 2;
    }
  }

  return {
    isContract,

    async assertCanPay(asset, wallet) {
      if (!(await isContract(wallet))) return;
      if (await acceptsContractSignatures(asset, wallet)) return;
      throw new WalletCannotPay(
        "contract_wallet_unsupported",
        `This wallet is a smart contract, and the token ${getAddress(asset)}${describe(network)} only accepts signatures made by a plain key (it has no EIP-1271 check): a payment signed by this wallet could never move its funds. Pay from a regular wallet (EOA).`,
      );
    },

    async verifyTypedData(typedData, signature, wallet) {
      const valid = await client
        .verifyTypedData({
          ...forViem(typedData),
          address: getAddress(wallet),
          signature,
        } as unknown as Parameters<PublicClient["verifyTypedData"]>[0])
        .catch((error: unknown) => {
          if (transportFailed(error)) throw unreadable("verify the signature");
          return false;
        });
      if (valid) return true;
      // viem reads a failed verification call as "invalid": make sure the chain did answer.
      await client.getBlockNumber({ cacheTime: 0 }).catch(() => {
        throw unreadable("verify the signature");
      });
      return false;
    },
  };
}

/** A read-only client of one RPC endpoint, bounded in time. */
export function evmPublicClient(rpcUrl: string): PublicClient {
  return createPublicClient({ transport: http(rpcUrl, { timeout: 5000, retryCount: 1 }) });
}
