import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { processAlive } from "../../../test/helpers.js";
import { type EvmChain, rawRequest, startEvmChain } from "./chain.js";

interface Block {
  number: string;
  timestamp: string;
}

const latest = async (chain: EvmChain) =>
  (await rawRequest(chain.provider, "eth_getBlockByNumber", ["latest", false])) as Block;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("the EVM chain's time with no transactions", () => {
  let chain: EvmChain;

  beforeAll(async () => {
    chain = await startEvmChain("127.0.0.1");
  });
  afterAll(async () => {
    await chain?.stop();
  });

  it("follows the wall clock: an empty block every second besides automine", async () => {
    const before = await latest(chain);
    await sleep(3_500);
    const after = await latest(chain);
    const nowSeconds = Math.floor(Date.now() / 1000);
    expect(Number(after.number) - Number(before.number)).toBeGreaterThanOrEqual(2);
    expect(Number(after.timestamp) - Number(before.timestamp)).toBeGreaterThanOrEqual(2);
    expect(Math.abs(nowSeconds - Number(after.timestamp))).toBeLessThanOrEqual(2);
  });

  it("keeps automine and same-second blocks: a burst of transactions is mined at once", async () => {
    const [from, to] = chain.wallets;
    const start = Number((await latest(chain)).number);
    const hashes = await Promise.all(
      Array.from({ length: 5 }, () =>
        rawRequest(chain.provider, "eth_sendTransaction", [
          { from: from?.address, to: to?.address, value: "0x1" },
        ]),
      ),
    );
    const receipts = (await Promise.all(
      hashes.map((hash) => rawRequest(chain.provider, "eth_getTransactionReceipt", [hash])),
    )) as Array<{ status: string; blockNumber: string } | null>;
    for (const receipt of receipts) expect(receipt?.status).toBe("0x1");
    const end = await latest(chain);
    // Five automined blocks in well under a second may share a timestamp, never run ahead of it.
    expect(Number(end.number) - start).toBeGreaterThanOrEqual(5);
    expect(Number(end.timestamp)).toBeLessThanOrEqual(Math.floor(Date.now() / 1000) + 1);
  });

  it("ends the chain's process on stop(): nothing mines on, nothing is left running", async () => {
    const pid = chain.pid;
    expect(processAlive(pid)).toBe(true);
    await chain.stop();
    expect(processAlive(pid)).toBe(false);
    await expect(latest(chain)).rejects.toThrow(/stopped/);
  });
});
