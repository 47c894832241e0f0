import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { createPublicClient, http } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadArtifacts } from "../devnet/evm/artifacts.js";
import { type EvmChain, rawRequest, startEvmChain } from "../devnet/evm/chain.js";
import { evmWalletChecks } from "./evm-wallets.js";
import { transferWithAuthorization } from "./testing/index.js";
import { ChainUnreadable, WalletCannotPay } from "./types.js";

const { DevUSDC, DevUSDCv21, DevSmartWallet } = loadArtifacts().contracts;
let chain: EvmChain;
/** A contract wallet planted on the chain (its immutable owner is zero: only its code matters here). */
const CONTRACT = "0x00000000000000000000000000000000000c0de1";

const typedData = (from: string, verifyingContract: string) =>
  transferWithAuthorization(
    { name: "USD Coin", version: "2", chainId: 31337, verifyingContract },
    {
      from,
      to: "0x0000000000000000000000000000000000000002",
      value: "10000",
      validAfter: "0",
      validBefore: "9999999999",
      nonce: `0x${"11".repeat(32)}`,
    },
  );

beforeAll(async () => {
  chain = await startEvmChain("127.0.0.1", { blockIntervalMs: 0 });
  await rawRequest(chain.provider, "hardhat_setCode", [CONTRACT, DevSmartWallet.deployedBytecode]);
});
afterAll(async () => {
  await chain?.stop();
});

describe("EVM wallet checks (approval)", () => {
  it("tells a token that checks contract signatures (v2.2-like) from one that cannot (v2.1-like)", async () => {
    const checks = evmWalletChecks(createPublicClient({ transport: http(chain.rpcUrl) }), "eip155:31337");
    const plain = privateKeyToAccount(generatePrivateKey()).address;
    expect(await checks.isContract(CONTRACT)).toBe(true);
    expect(await checks.isContract(plain)).toBe(false);
    await checks.assertCanPay(chain.usdc, CONTRACT);
    await rawRequest(chain.provider, "hardhat_setCode", [chain.usdc, DevUSDCv21.deployedBytecode]);
    try {
      const refused = await checks.assertCanPay(chain.usdc, CONTRACT).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(WalletCannotPay);
      expect((refused as WalletCannotPay).reason).toBe("contract_wallet_unsupported");
      // A plain key's wallet is never refused for it.
      await checks.assertCanPay(chain.usdc, plain);
    } finally {
      await rawRequest(chain.provider, "hardhat_setCode", [chain.usdc, DevUSDC.deployedBytecode]);
    }
  });

  it("an RPC that fails is ChainUnreadable, never a verdict on the signature or the token", async () => {
    // Answers every request with a 502: reachable, but no chain behind it.
    const server = createServer((_req, res) => res.writeHead(502).end("bad gateway"));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const checks = evmWalletChecks(createPublicClient({ transport: http(url, { retryCount: 0 }) }));
      const account = privateKeyToAccount(generatePrivateKey());
      const data = typedData(CONTRACT, chain.usdc);
      // A contract's signature cannot be checked without the chain.
      const signature = await account.signTypedData({
        ...data,
        message: { ...data.message, value: 10000n, validAfter: 0n, validBefore: 9999999999n },
      } as Parameters<typeof account.signTypedData>[0]);
      await expect(checks.verifyTypedData(data, signature, CONTRACT)).rejects.toBeInstanceOf(ChainUnreadable);
      await expect(checks.isContract(CONTRACT)).rejects.toBeInstanceOf(ChainUnreadable);
      await expect(checks.assertCanPay(chain.usdc, CONTRACT)).rejects.toBeInstanceOf(ChainUnreadable);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
