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
const nowSeconds = () => Math.floor(Date.now() / 1000);

/** The interval here: the devnet's (a second) only changes how long the test waits for blocks. */
const INTERVAL_MS = 200;

describe("the EVM chain's time with no transactions", () => {
  let chain: EvmChain;

  beforeAll(async () => {
    chain = await startEvmChain("127.0.0.1", { blockIntervalMs: INTERVAL_MS });
  });
  afterAll(async () => {
    await chain?.stop();
  });

  it("follows the wall clock: an empty block every interval besides automine", async () => {
    // Waits for what the chain does by itself, not for a length of time: two empty blocks, the
    // later one in a second the wall clock reached after the first was read.
    const before = await latest(chain);
    const nextSecond = nowSeconds() + 1;
    let after = before;
    for (let polls = 0; polls < 150; polls++) {
      after = await latest(chain);
      if (Number(after.number) >= Number(before.number) + 2 && Number(after.timestamp) >= nextSecond) break;
      await sleep(INTERVAL_MS / 2);
    }
    expect(Number(after.number) - Number(before.number), "empty blocks mined").toBeGreaterThanOrEqual(2);
    expect(Number(after.timestamp), "the latest block's second").toBeGreaterThanOrEqual(nextSecond);
    // Never ahead of the wall clock.
    expect(Number(after.timestamp)).toBeLessThanOrEqual(nowSeconds());
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
    expect(Number(end.timestamp)).toBeLessThanOrEqual(nowSeconds() + 1);
  });

  it("ends the chain's process on stop(): nothing mines on, nothing is left running", async () => {
    const pid = chain.pid;
    expect(processAlive(pid)).toBe(true);
    await chain.stop();
    expect(processAlive(pid)).toBe(false);
    await expect(latest(chain)).rejects.toThrow(/stopped/);
  });
});
