/**
 * Client-side helpers for the devnet's own tests: an x402 paying `fetch` per chain and balance
 * readers. Built only from public x402 packages and the manifest, like any real client.
 */
import { createKeyPairSignerFromBytes } from "@solana/kit";
import { x402Client } from "@x402/core/client";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import { ExactSvmScheme } from "@x402/svm/exact/client";
import { createPublicClient, erc20Abi, http } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import type { Devnet } from "../types.js";

/** What these helpers read from a devnet (in this process or shared by the test run). */
export type DevnetView = Pick<Devnet, "manifest" | "secrets">;

type PayingFetch = ReturnType<typeof wrapFetchWithPayment>;

/**
 * A `fetch` that pays on the EVM chain only, from wallet `name`. The SDK's spend controls are
 * off here: they know only real USDC, and the devnet tests exercise prices above $1 too.
 */
export function evmPayingFetch(devnet: DevnetView, name = "payer"): PayingFetch {
  const key = devnet.secrets.evm[name];
  if (!key) throw new Error(`no EVM wallet ${name}`);
  const client = new x402Client().register(
    devnet.manifest.evm.network,
    new ExactEvmScheme(privateKeyToAccount(key), { rpcUrl: devnet.manifest.evm.rpcUrl }),
  );
  client.setSpendControls(false);
  return wrapFetchWithPayment(fetch, client);
}

/** A `fetch` that pays on Solana only, from wallet `name`. */
export async function solanaPayingFetch(devnet: DevnetView, name = "payer"): Promise<PayingFetch> {
  const solana = devnet.manifest.solana;
  const secret = devnet.secrets.solana[name];
  if (!solana || !secret) throw new Error(`no Solana wallet ${name}`);
  const signer = await createKeyPairSignerFromBytes(secret);
  const client = new x402Client().register(
    solana.network as `${string}:${string}`,
    new ExactSvmScheme(signer, { rpcUrl: solana.rpcUrl }),
  );
  client.setSpendControls(false);
  return wrapFetchWithPayment(fetch, client);
}

/** USDC balance (atomic units) of an EVM address, read from the chain. */
export async function evmUsdcBalance(devnet: DevnetView, address: `0x${string}`): Promise<bigint> {
  const client = createPublicClient({ transport: http(devnet.manifest.evm.rpcUrl) });
  return client.readContract({
    address: devnet.manifest.evm.usdc,
    abi: erc20Abi,
    functionName: "balanceOf",
    args: [address],
  });
}

/** USDC balance (atomic units) of a Solana owner's token accounts for the devnet mint. */
export async function solanaUsdcBalance(devnet: DevnetView, owner: string): Promise<bigint> {
  const solana = devnet.manifest.solana;
  if (!solana) throw new Error("Solana is not running");
  const response = await fetch(solana.rpcUrl, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "getTokenAccountsByOwner",
      params: [owner, { mint: solana.usdcMint }, { encoding: "jsonParsed", commitment: "confirmed" }],
    }),
  });
  const body = (await response.json()) as {
    result: {
      value: Array<{ account: { data: { parsed: { info: { tokenAmount: { amount: string } } } } } }>;
    };
  };
  return body.result.value.reduce(
    (sum, a) => sum + BigInt(a.account.data.parsed.info.tokenAmount.amount),
    0n,
  );
}

/** Address of a named wallet in the manifest. */
export function walletAddress(devnet: DevnetView, chain: "evm", name: string): `0x${string}`;
export function walletAddress(devnet: DevnetView, chain: "solana", name: string): string;
export function walletAddress(devnet: DevnetView, chain: "evm" | "solana", name: string): string {
  const wallets = chain === "evm" ? devnet.manifest.evm.wallets : (devnet.manifest.solana?.wallets ?? []);
  const wallet = wallets.find((w) => w.name === name);
  if (!wallet) throw new Error(`no ${chain} wallet ${name}`);
  return wallet.address;
}

/** Builds the request for a service from its bazaar example input. */
export function serviceRequest(
  service: Devnet["manifest"]["services"][number],
  input: Record<string, string>,
): [string, RequestInit] {
  if (service.method === "GET") return [`${service.url}?${new URLSearchParams(input)}`, {}];
  return [
    service.url,
    { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(input) },
  ];
}
