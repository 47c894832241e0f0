/** Opening and using tabs in tests (tabs.test.ts, tab-attacks.test.ts): what a client does, over HTTP. */
import {
  address,
  createKeyPairSignerFromBytes,
  createSolanaRpc,
  getBase64EncodedWireTransaction,
  getTransactionDecoder,
  type Transaction,
} from "@solana/kit";
import { type PrivateKeyAccount, privateKeyToAccount } from "viem/accounts";
import { expect } from "vitest";
import type { TabOpened, TabView } from "../../src/protocol/index.js";
import { type Booted, chat, type TestDevnet, WEATHER_PARIS } from "./harness.js";

export const ALICE = "alice-token-0123456789";
export const MALLORY = "mallory-token-0123456789";
/** A test's tab secret: instances sharing it derive the same session keys. */
export const TAB_SECRET = "5e".repeat(32);
export const TAB_ENV = { AUTH_TOKENS: `alice=${ALICE},mallory=${MALLORY}`, TAB_SECRET };

export function userAccount(devnet: TestDevnet): PrivateKeyAccount {
  const key = devnet.secrets.evm.user;
  if (!key) throw new Error("the devnet has no user wallet");
  return privateKeyToAccount(key);
}

export function call(b: Booted, method: string, path: string, token: string, body?: unknown, headers = {}) {
  return b.running.service.app.request(path, {
    method,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json", ...headers },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
}

/** What the user's wallet does with the opening's typed data: sign exactly it. */
export function signOpening(opened: TabOpened, account: PrivateKeyAccount): Promise<`0x${string}`> {
  const sign = opened.sign;
  if (sign.kind !== "evm-typed-data") throw new Error("not an EVM opening");
  const { EIP712Domain: _domain, ...types } = sign.typedData.types;
  return account.signTypedData({
    domain: { ...sign.typedData.domain, chainId: Number(sign.typedData.domain.chainId) },
    types,
    primaryType: sign.typedData.primaryType,
    message: sign.typedData.message,
  } as Parameters<PrivateKeyAccount["signTypedData"]>[0]);
}

export async function openTab(
  b: Booted,
  account: PrivateKeyAccount,
  amount: bigint,
  options: { as?: string; seconds?: number } = {},
): Promise<TabOpened & { fund: TabView }> {
  const as = options.as ?? ALICE;
  const body = {
    walletAddress: account.address,
    amount: (Number(amount) / 1e6).toFixed(6),
    ...(options.seconds ? { seconds: options.seconds } : {}),
  };
  const opened = (await (await call(b, "POST", "/api/tabs", as, body)).json()) as TabOpened;
  expect(opened.status).toBe("awaiting_signature");
  const signature = await signOpening(opened, account);
  const funded = await call(b, "POST", `/api/tabs/${opened.tabId}/fund`, as, {
    token: opened.token,
    signature,
  });
  expect(funded.status).toBe(200);
  return { ...opened, fund: (await funded.json()) as TabView };
}

export async function readTab(
  b: Booted,
  tab: { tabId: string; token: string },
  as = ALICE,
): Promise<TabView> {
  const read = await call(b, "GET", `/api/tabs/${tab.tabId}`, as, undefined, { "x-tab-token": tab.token });
  return (await read.json()) as TabView;
}

export async function closeTab(
  b: Booted,
  tab: { tabId: string; token: string },
  as = ALICE,
): Promise<TabView> {
  return (await (
    await call(b, "POST", `/api/tabs/${tab.tabId}/close`, as, { token: tab.token })
  ).json()) as TabView;
}

export const ask = (b: Booted, tab: string, wallet: string, as = ALICE) =>
  chat(b.running, {
    token: as,
    body: { messages: [{ role: "user", content: WEATHER_PARIS }], walletAddress: wallet, tab },
  });

/** What a Solana wallet does with the opening's transaction: add its signature, change nothing else. */
export async function signSolanaOpening(opened: TabOpened, secret: Uint8Array): Promise<string> {
  const sign = opened.sign;
  if (sign.kind !== "solana-transaction") throw new Error("not a Solana opening");
  const signer = await createKeyPairSignerFromBytes(secret);
  const tx = getTransactionDecoder().decode(Buffer.from(sign.transaction, "base64")) as Transaction;
  const [signatures] = await signer.signTransactions([
    tx as Parameters<typeof signer.signTransactions>[0][number],
  ]);
  return getBase64EncodedWireTransaction({ ...tx, signatures: { ...tx.signatures, ...signatures } });
}

/** A Solana wallet's tab: opened, its transaction signed by `secret`, funded. */
export async function openSolanaTab(
  b: Booted,
  wallet: { address: string; secret: Uint8Array },
  amount: bigint,
): Promise<TabOpened & { fund: TabView }> {
  const body = { walletAddress: wallet.address, amount: (Number(amount) / 1e6).toFixed(6) };
  const opened = (await (await call(b, "POST", "/api/tabs", ALICE, body)).json()) as TabOpened;
  expect(opened.status).toBe("awaiting_signature");
  const transaction = await signSolanaOpening(opened, wallet.secret);
  const funded = await call(b, "POST", `/api/tabs/${opened.tabId}/fund`, ALICE, {
    token: opened.token,
    transaction,
  });
  expect(funded.status).toBe(200);
  return { ...opened, fund: (await funded.json()) as TabView };
}

/** An account's lamports on the devnet's Solana node. */
export async function lamportsOf(devnet: TestDevnet, owner: string): Promise<bigint> {
  const rpcUrl = devnet.manifest.solana?.rpcUrl;
  if (!rpcUrl) throw new Error("Solana is not running");
  const { value } = await createSolanaRpc(rpcUrl).getBalance(address(owner)).send();
  return BigInt(value);
}
