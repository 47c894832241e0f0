/**
 * Renewing the EVM chain (renewal.ts): the history goes, the state a payment depends on stays.
 * On a real EDR chain: payments by EIP-3009 authorization, an approval, a cancelled authorization
 * and gas spent before; after the renewal every balance, allowance, the supply, the facilitator's
 * nonce and ETH are as they were, a used authorization cannot be replayed and a cancelled one not
 * used, a new payment goes through, blocks go on, the old blocks are gone and so is the old chain's
 * process.
 */

import {
  type Address,
  createWalletClient,
  custom,
  type Hex,
  type PrivateKeyAccount,
  publicActions,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { hardhat } from "viem/chains";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { processAlive } from "../../../test/helpers.js";
import { transferWithAuthorization } from "../../chains/testing/eip3009.js";
import { loadArtifacts } from "./artifacts.js";
import { type EvmChain, rawRequest, startEvmChain, USDC_DOMAIN } from "./chain.js";

const abi = loadArtifacts().contracts.DevUSDC.abi;
let chain: EvmChain;

beforeAll(async () => {
  chain = await startEvmChain("127.0.0.1", { blockIntervalMs: 0, renewEvery: 0 });
});
afterAll(async () => {
  await chain?.stop();
});

function walletOf(name: string) {
  const wallet = chain.wallets.find((w) => w.name === name);
  if (!wallet) throw new Error(`no wallet ${name}`);
  return { account: privateKeyToAccount(wallet.privateKey), address: wallet.address };
}

function clientOf(account: PrivateKeyAccount) {
  return createWalletClient({ account, chain: hardhat, transport: custom(chain.provider) }).extend(
    publicActions,
  );
}

async function authorization(from: PrivateKeyAccount, to: Address, value: bigint, nonce: Hex) {
  const now = BigInt(Math.floor(Date.now() / 1000));
  const message = { from: from.address, to, value, validAfter: 0n, validBefore: now + 3600n, nonce };
  const signature = await from.signTypedData(
    transferWithAuthorization(
      { ...USDC_DOMAIN, chainId: hardhat.id, verifyingContract: chain.usdc },
      message,
    ),
  );
  return { message, signature };
}

describe("renewing the EVM chain", () => {
  it("keeps balances, allowances, the supply, used and cancelled authorizations, nonces and ETH; drops the blocks", async () => {
    const payer = walletOf("payer");
    const merchant = walletOf("merchant");
    const facilitator = walletOf("facilitator");
    const user = walletOf("user");
    const relay = clientOf(facilitator.account);
    const read = clientOf(payer.account);
    const pay = async (nonce: Hex) => {
      const { message, signature } = await authorization(payer.account, merchant.address, 10_000n, nonce);
      const hash = await relay.writeContract({
        address: chain.usdc,
        abi,
        functionName: "transferWithAuthorization",
        args: [
          message.from,
          message.to,
          message.value,
          message.validAfter,
          message.validBefore,
          message.nonce,
          signature,
        ],
      });
      return relay.waitForTransactionReceipt({ hash });
    };
    const used = `0x${"11".repeat(32)}` as Hex;
    await pay(used);
    await pay(`0x${"12".repeat(32)}`);
    // The payer cancels an authorization it signed and never used.
    const cancelled = `0x${"14".repeat(32)}` as Hex;
    const cancel = await payer.account.signTypedData({
      domain: { ...USDC_DOMAIN, chainId: hardhat.id, verifyingContract: chain.usdc },
      types: {
        CancelAuthorization: [
          { name: "authorizer", type: "address" },
          { name: "nonce", type: "bytes32" },
        ],
      },
      primaryType: "CancelAuthorization",
      message: { authorizer: payer.address, nonce: cancelled },
    });
    await relay.waitForTransactionReceipt({
      hash: await relay.writeContract({
        address: chain.usdc,
        abi,
        functionName: "cancelAuthorization",
        args: [payer.address, cancelled, cancel],
      }),
    });
    const approving = clientOf(user.account);
    await approving.waitForTransactionReceipt({
      hash: await approving.writeContract({
        address: chain.usdc,
        abi,
        functionName: "approve",
        args: [merchant.address, 123n],
      }),
    });
    const balance = (a: Address) =>
      read.readContract({
        address: chain.usdc,
        abi,
        functionName: "balanceOf",
        args: [a],
      }) as Promise<bigint>;
    const state = async () => ({
      payer: await balance(payer.address),
      merchant: await balance(merchant.address),
      supply: await read.readContract({ address: chain.usdc, abi, functionName: "totalSupply" }),
      allowance: await read.readContract({
        address: chain.usdc,
        abi,
        functionName: "allowance",
        args: [user.address, merchant.address],
      }),
      used: await read.readContract({
        address: chain.usdc,
        abi,
        functionName: "authorizationState",
        args: [payer.address, used],
      }),
      facilitatorNonce: await read.getTransactionCount({ address: facilitator.address }),
      facilitatorEth: await read.getBalance({ address: facilitator.address }),
    });
    const before = await state();
    const blockNumber = async () => BigInt((await rawRequest(chain.provider, "eth_blockNumber", [])) as Hex);
    const blocksBefore = await blockNumber();
    expect(before.used).toBe(true);

    const oldPid = chain.pid;
    const renewal = await chain.renew();
    expect(renewal).toMatchObject({ transactions: expect.any(Number) });
    // The old chain's process has ended (EDR frees its memory no other way) and a new one runs.
    expect(chain.pid).not.toBe(oldPid);
    expect(processAlive(oldPid)).toBe(false);
    expect(processAlive(chain.pid)).toBe(true);

    expect(await state()).toEqual(before);
    expect(await blockNumber()).toBeLessThan(blocksBefore);
    // Neither the used authorization nor the cancelled one can be used; a new one pays.
    await expect(pay(used)).rejects.toThrow(/used or canceled/);
    await expect(pay(cancelled)).rejects.toThrow(/used or canceled/);
    await pay(`0x${"13".repeat(32)}`);
    expect(await balance(merchant.address)).toBe(before.merchant + 10_000n);
    expect(await read.getTransactionCount({ address: facilitator.address })).toBe(
      before.facilitatorNonce + 1,
    );
    // The devnet's faucet still mints (the deployer's nonce was carried too).
    await chain.fund(user.address, 5n);
    expect(await balance(user.address)).toBeGreaterThan(0n);
    // And a second renewal carries what the first did, though its logs are gone.
    await chain.renew();
    expect((await state()).used).toBe(true);
    expect(await balance(merchant.address)).toBe(before.merchant + 10_000n);
  });

  it("goes on mining empty blocks on its interval after a renewal (chain time keeps following the clock)", async () => {
    const ticking = await startEvmChain("127.0.0.1", { blockIntervalMs: 100, renewEvery: 0 });
    try {
      const number = async () => BigInt((await rawRequest(ticking.provider, "eth_blockNumber", [])) as Hex);
      expect(await ticking.renew()).toMatchObject({ transactions: 0 });
      const after = await number();
      for (let i = 0; i < 100 && (await number()) < after + 2n; i++)
        await new Promise((r) => setTimeout(r, 50));
      expect(await number()).toBeGreaterThanOrEqual(after + 2n);
    } finally {
      await ticking.stop();
    }
  });

  it("is not renewed once the chain holds what it cannot carry (a contract of unknown layout)", async () => {
    const deployer = clientOf(walletOf("payer").account);
    const hash = await deployer.deployContract({ abi, bytecode: loadArtifacts().contracts.DevUSDC.bytecode });
    await deployer.waitForTransactionReceipt({ hash });
    expect(await chain.renew()).toEqual({ skipped: "a contract was deployed" });
    expect(await rawRequest(chain.provider, "eth_blockNumber", [])).toBeTruthy();
  });
});
