/**
 * Approval from a smart-contract wallet (EIP-1271; EIP-6492 before deployment), on the real devnet:
 * a minimal contract wallet (contracts/DevSmartWallet.sol) whose owner key signs, deployed and
 * funded here. The devnet's token checks contract signatures as FiatToken v2.2 does; a test plants
 * the v2.1-like token's code (no EIP-1271) at the same address to play a token that cannot.
 */
import {
  createWalletClient,
  encodeAbiParameters,
  encodeFunctionData,
  erc20Abi,
  type Hex,
  http,
  type PrivateKeyAccount,
  publicActions,
  serializeErc6492Signature,
} from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { hardhat } from "viem/chains";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { loadArtifacts } from "../../src/devnet/evm/artifacts.js";
import { evmUsdcBalance, walletAddress } from "../../src/devnet/testing/index.js";
import {
  type Awaiting,
  awaiting,
  type Booted,
  boot,
  type ChatResult,
  chat,
  ledgerOf,
  priceOf,
  problem,
  signTypedDataOf,
  useTestDevnet,
  WEATHER_PARIS,
} from "./harness.js";

const { DevSmartWalletFactory, DevUSDCv21 } = loadArtifacts().contracts;

const devnet = useTestDevnet();
let booted: Booted;
/** Pays the gas of the set-up and funds the wallets (the devnet's `payer`). */
let funder: ReturnType<typeof chainClient>;
let factory: Hex;
/** The token's real code, put back after a test that swapped it. */
let tokenCode: Hex;

const chainClient = (account: PrivateKeyAccount) =>
  createWalletClient({ account, chain: hardhat, transport: http(devnet.manifest.evm.rpcUrl) }).extend(
    publicActions,
  );

async function setTokenCode(code: Hex): Promise<void> {
  await funder.request({
    method: "hardhat_setCode",
    params: [devnet.manifest.evm.usdc, code],
  } as never);
}

/** A contract wallet of `owner` at its CREATE2 address, funded with `usdc`; deployed unless told not. */
async function contractWallet(owner: PrivateKeyAccount, usdc: bigint, deploy = true) {
  const salt = generatePrivateKey();
  const address = (await funder.readContract({
    address: factory,
    abi: DevSmartWalletFactory.abi,
    functionName: "walletAddress",
    args: [owner.address, salt],
  })) as Hex;
  const deployData = encodeFunctionData({
    abi: DevSmartWalletFactory.abi,
    functionName: "deploy",
    args: [owner.address, salt],
  });
  if (deploy) {
    const hash = await funder.sendTransaction({ to: factory, data: deployData });
    await funder.waitForTransactionReceipt({ hash });
  }
  const hash = await funder.writeContract({
    address: devnet.manifest.evm.usdc,
    abi: erc20Abi,
    functionName: "transfer",
    args: [address, usdc],
  });
  await funder.waitForTransactionReceipt({ hash });
  return { address, deployData };
}

/** What the wallet answers: its owner's signature of the typed data, wrapped as the wallet reads it. */
async function walletSignature(ask: Awaiting, owner: PrivateKeyAccount): Promise<Hex> {
  const ownerSignature = await signTypedDataOf(ask, owner);
  return encodeAbiParameters([{ type: "uint256" }, { type: "bytes" }], [0n, ownerSignature]);
}

function resumeBody(first: ChatResult, wallet: string, approval: Record<string, unknown>) {
  const said = first.events.flatMap((e) => (e.type === "text" ? [e.text] : [])).join("");
  return {
    messages: [
      { role: "user", content: WEATHER_PARIS },
      { role: "assistant", content: said || "Please approve." },
    ],
    walletAddress: wallet,
    approval,
  };
}

const answer = (first: ChatResult, wallet: string, paymentId: string, signature: Hex) =>
  booted.running.service.app.request("/api/chat", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(resumeBody(first, wallet, { paymentId, signature })),
  });

const merchant = () => evmUsdcBalance(devnet, walletAddress(devnet, "evm", "merchant"));

beforeAll(async () => {
  booted = await boot(devnet, { store: "pglite" });
  const key = devnet.secrets.evm.payer;
  if (!key) throw new Error("the devnet has no payer wallet");
  funder = chainClient(privateKeyToAccount(key));
  const hash = await funder.deployContract({
    abi: DevSmartWalletFactory.abi,
    bytecode: DevSmartWalletFactory.bytecode,
  });
  const receipt = await funder.waitForTransactionReceipt({ hash });
  if (!receipt.contractAddress) throw new Error("no factory address");
  factory = receipt.contractAddress;
  tokenCode = await funder.getCode({ address: devnet.manifest.evm.usdc }).then((c) => c ?? "0x");
});
afterEach(async () => {
  await setTokenCode(tokenCode);
});
afterAll(async () => {
  await booted?.close();
});

describe("approval from a smart-contract wallet", () => {
  it("EIP-1271: the owner's signature approves, the payment settles from the contract's funds", async () => {
    const price = priceOf(devnet, "weather");
    const owner = privateKeyToAccount(generatePrivateKey());
    const wallet = await contractWallet(owner, 1_000_000n);
    const merchantBefore = await merchant();

    const first = await chat(booted.running, { wallet: wallet.address });
    const ask = awaiting(first);
    expect(ask.approval.wallet.toLowerCase()).toBe(wallet.address.toLowerCase());
    const signature = await walletSignature(ask, owner);
    expect((signature.length - 2) / 2).toBeGreaterThan(65);

    // Another key's signature, wrapped the same way: the wallet says no, so does the service.
    const stranger = await walletSignature(ask, privateKeyToAccount(generatePrivateKey()));
    expect(await problem(await answer(first, wallet.address, ask.paymentId, stranger))).toMatchObject({
      status: 400,
      code: "approval_invalid",
    });
    // The owner's bare signature is not the wallet's (it reads only its wrapped form).
    const bare = await signTypedDataOf(ask, owner);
    expect(await problem(await answer(first, wallet.address, ask.paymentId, bare))).toMatchObject({
      status: 400,
      code: "approval_invalid",
    });
    expect((await ledgerOf(booted.running).get(ask.paymentId))?.status).toBe("awaiting_approval");
    expect(await evmUsdcBalance(devnet, wallet.address)).toBe(1_000_000n);

    const second = await chat(booted.running, {
      body: resumeBody(first, wallet.address, { paymentId: ask.paymentId, signature }),
    });
    expect(second.status).toBe(200);
    expect(second.errors).toEqual([]);
    expect(second.payments.map((p) => p.status)).toEqual(["reserved", "signed", "submitted", "settled"]);
    expect(second.finish.finishReason).toBe("payment-complete");
    expect(second.payments.at(-1)?.payer?.toLowerCase()).toBe(wallet.address.toLowerCase());
    expect(await evmUsdcBalance(devnet, wallet.address)).toBe(1_000_000n - price);
    expect((await merchant()) - merchantBefore).toBe(price);
    expect(second.raw).not.toContain(signature.slice(2));
  });

  it("a token without EIP-1271 (FiatToken v2.1-like): refused with a clear code before the wallet is asked, and at the answer", async () => {
    const owner = privateKeyToAccount(generatePrivateKey());
    const wallet = await contractWallet(owner, 1_000_000n);
    const merchantBefore = await merchant();

    // Asked while the token could check it; the token is then one that cannot.
    const first = await chat(booted.running, { wallet: wallet.address });
    const ask = awaiting(first);
    const signature = await walletSignature(ask, owner);
    await setTokenCode(DevUSDCv21.deployedBytecode);
    const refused = await problem(await answer(first, wallet.address, ask.paymentId, signature));
    expect(refused).toMatchObject({
      status: 403,
      code: "payment_unavailable",
      reason: "contract_wallet_unsupported",
    });
    expect(String(refused.detail)).toMatch(/smart contract.*EIP-1271/);
    expect((await ledgerOf(booted.running).get(ask.paymentId))?.status).toBe("awaiting_approval");

    // A new payment: refused before anything is asked of the wallet (no typed data to sign).
    const again = await chat(booted.running, { wallet: wallet.address });
    expect(again.payments.some((p) => p.status === "awaiting_approval" || p.approval)).toBe(false);
    expect(again.payments.at(-1)).toMatchObject({ status: "refused", reason: "wallet_unsupported" });
    expect(again.errors.map((e) => e.code)).toEqual(["payment_unavailable"]);
    expect(again.errors[0]?.message).toMatch(/smart contract.*EIP-1271/);
    expect(again.finish.finishReason).toBe("payment-failed");

    // A plain key's wallet still asks with that token: only contract wallets are refused.
    const user = await chat(booted.running, { wallet: walletAddress(devnet, "evm", "user") });
    expect(user.finish.finishReason).toBe("approval-required");

    expect(await evmUsdcBalance(devnet, wallet.address)).toBe(1_000_000n);
    expect(await merchant()).toBe(merchantBefore);
  });

  it("EIP-6492 (wallet not deployed yet): a valid signature is refused clearly, nothing moves, nothing is deployed", async () => {
    const owner = privateKeyToAccount(generatePrivateKey());
    const wallet = await contractWallet(owner, 1_000_000n, false);
    const first = await chat(booted.running, { wallet: wallet.address });
    const ask = awaiting(first);
    const signature = serializeErc6492Signature({
      address: factory,
      data: wallet.deployData,
      signature: await walletSignature(ask, owner),
    });
    const refused = await problem(await answer(first, wallet.address, ask.paymentId, signature));
    expect(refused).toMatchObject({
      status: 403,
      code: "payment_unavailable",
      reason: "wallet_not_deployed",
    });
    expect(String(refused.detail)).toMatch(/not deployed/);
    // The same wrapper around another key's signature is not the wallet's: 400.
    const forged = serializeErc6492Signature({
      address: factory,
      data: wallet.deployData,
      signature: await walletSignature(ask, privateKeyToAccount(generatePrivateKey())),
    });
    expect(await problem(await answer(first, wallet.address, ask.paymentId, forged))).toMatchObject({
      status: 400,
      code: "approval_invalid",
    });
    expect(await funder.getCode({ address: wallet.address })).toBeUndefined();
    expect(await evmUsdcBalance(devnet, wallet.address)).toBe(1_000_000n);
    expect((await ledgerOf(booted.running).get(ask.paymentId))?.status).toBe("awaiting_approval");
  });
});
