import { createWalletClient, custom, type Hex, parseSignature, publicActions, toHex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { hardhat } from "viem/chains";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { transferWithAuthorization } from "../../chains/testing/index.js";
import { loadArtifacts } from "./artifacts.js";
import { type EvmChain, MULTICALL3_ADDRESS, startEvmChain, USDC_DOMAIN } from "./chain.js";

const { DevUSDC, Multicall3 } = loadArtifacts().contracts;
let chain: EvmChain;

beforeAll(async () => {
  chain = await startEvmChain("127.0.0.1");
});
afterAll(async () => {
  await chain?.stop();
});

const wallet = (name: string) => {
  const w = chain.wallets.find((x) => x.name === name);
  if (!w) throw new Error(name);
  return w;
};
const client = (name: string) =>
  createWalletClient({
    account: privateKeyToAccount(wallet(name).privateKey),
    chain: hardhat,
    transport: custom(chain.provider),
  }).extend(publicActions);
const balance = async (address: Hex) =>
  (await client("facilitator").readContract({
    address: chain.usdc,
    abi: DevUSDC.abi,
    functionName: "balanceOf",
    args: [address],
  })) as bigint;

async function authorize(from: string, to: Hex, value: bigint, validBefore?: bigint) {
  const nonce = toHex(crypto.getRandomValues(new Uint8Array(32)));
  const message = {
    from: wallet(from).address,
    to,
    value,
    validAfter: 0n,
    validBefore: validBefore ?? BigInt(Math.floor(Date.now() / 1000) + 600),
    nonce,
  };
  const signature = await client(from).signTypedData(
    transferWithAuthorization({ ...USDC_DOMAIN, chainId: 31337, verifyingContract: chain.usdc }, message),
  );
  const args = [
    message.from,
    message.to,
    message.value,
    message.validAfter,
    message.validBefore,
    nonce,
  ] as const;
  return { args, signature, nonce };
}

describe("DevUSDC (EIP-3009)", () => {
  it("exposes USDC's metadata and the funded balances", async () => {
    const c = client("facilitator");
    const read = (functionName: "name" | "version" | "decimals") =>
      c.readContract({ address: chain.usdc, abi: DevUSDC.abi, functionName });
    expect([await read("name"), await read("version"), await read("decimals")]).toEqual(["USD Coin", "2", 6]);
    expect(await balance(wallet("payer").address)).toBe(1_000_000_000n);
    expect(await balance(wallet("payer-low").address)).toBe(1_000n);
  });

  it("moves funds with the bytes-signature overload, once per nonce", async () => {
    const merchant = wallet("merchant").address;
    const before = await balance(merchant);
    const { args, signature, nonce } = await authorize("payer", merchant, 1234n);
    const c = client("facilitator");
    const send = () =>
      c.writeContract({
        address: chain.usdc,
        abi: DevUSDC.abi,
        functionName: "transferWithAuthorization",
        args: [...args, signature],
      });
    await c.waitForTransactionReceipt({ hash: await send() });
    expect(await balance(merchant)).toBe(before + 1234n);
    const used = await c.readContract({
      address: chain.usdc,
      abi: DevUSDC.abi,
      functionName: "authorizationState",
      args: [wallet("payer").address, nonce],
    });
    expect(used).toBe(true);
    await expect(send()).rejects.toThrow(/authorization is used or canceled/);
  });

  it("moves funds with the v,r,s overload and rejects expired or forged authorizations", async () => {
    const merchant = wallet("merchant").address;
    const c = client("facilitator");
    const ok = await authorize("payer", merchant, 1n);
    const { v, r, s } = parseSignature(ok.signature);
    await c.waitForTransactionReceipt({
      hash: await c.writeContract({
        address: chain.usdc,
        abi: DevUSDC.abi,
        functionName: "transferWithAuthorization",
        args: [...ok.args, Number(v), r, s],
      }),
    });
    const expired = await authorize("payer", merchant, 1n, 1n);
    await expect(
      c.simulateContract({
        address: chain.usdc,
        abi: DevUSDC.abi,
        functionName: "transferWithAuthorization",
        args: [...expired.args, expired.signature],
      }),
    ).rejects.toThrow(/expired/);
    const forged = await authorize("payer-2", merchant, 1n);
    const claimed = [wallet("payer").address, ...forged.args.slice(1)] as unknown as typeof forged.args;
    await expect(
      c.simulateContract({
        address: chain.usdc,
        abi: DevUSDC.abi,
        functionName: "transferWithAuthorization",
        args: [...claimed, forged.signature],
      }),
    ).rejects.toThrow(/invalid signature/);
  });

  it("refuses a transfer above the balance", async () => {
    const low = await authorize("payer-low", wallet("merchant").address, 10_000n);
    await expect(
      client("facilitator").simulateContract({
        address: chain.usdc,
        abi: DevUSDC.abi,
        functionName: "transferWithAuthorization",
        args: [...low.args, low.signature],
      }),
    ).rejects.toThrow(/exceeds balance/);
  });
});

describe("Multicall3 at its canonical address", () => {
  it("answers tryAggregate and aggregate3", async () => {
    const c = client("facilitator");
    const callData = "0x06fdde03"; // name()
    type Results = Array<{ success: boolean; returnData: Hex }>;
    const [tried] = (await c.readContract({
      address: MULTICALL3_ADDRESS,
      abi: Multicall3.abi,
      functionName: "tryAggregate",
      args: [false, [{ target: chain.usdc, callData }]],
    })) as Results;
    expect(tried?.success).toBe(true);
    const results = (await c.readContract({
      address: MULTICALL3_ADDRESS,
      abi: Multicall3.abi,
      functionName: "aggregate3",
      args: [[{ target: chain.usdc, allowFailure: true, callData }]],
    })) as Results;
    expect(results[0]?.success).toBe(true);
  });
});
