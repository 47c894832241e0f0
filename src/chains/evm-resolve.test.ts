import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { familyOf } from "./index.js";

/**
 * How an unclear EVM payment is judged (chains/evm.ts, `resolve`), against a JSON-RPC node whose
 * finalized block lags its head, as every real chain's does, and that keeps state only for the
 * last 128 blocks, as a full node (not an archive) does.
 */
const ASSET = "0x036CbD53842c5426634e7929541eC2318f3dCF7e";
const FROM = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const NONCE = `0x${"ab".repeat(32)}`;
const VALID_BEFORE = 1_000_000;

interface Node {
  latest: { number: number; timestamp: number };
  finalized: { number: number; timestamp: number };
  /** From which block on the authorization's nonce reads as used (none: never). */
  usedFrom?: number;
}

const hex = (n: number) => `0x${n.toString(16)}`;

function block(b: { number: number; timestamp: number }) {
  return {
    number: hex(b.number),
    hash: `0x${b.number.toString(16).padStart(64, "0")}`,
    parentHash: `0x${"00".repeat(32)}`,
    timestamp: hex(b.timestamp),
    gasLimit: "0x1c9c380",
    gasUsed: "0x0",
    baseFeePerGas: "0x0",
    miner: `0x${"00".repeat(20)}`,
    transactions: [],
    uncles: [],
  };
}

let server: Server | undefined;
afterEach(async () => {
  server?.close();
  server = undefined;
});

async function start(node: Node): Promise<string> {
  server = createServer((req, res) => {
    let body = "";
    req.on("data", (part: Buffer) => {
      body += part.toString();
    });
    req.on("end", () => {
      const { id, method, params } = JSON.parse(body) as { id: number; method: string; params: unknown[] };
      let result: unknown = null;
      if (method === "eth_chainId") result = hex(84532);
      if (method === "eth_getBlockByNumber")
        result = block(params[0] === "finalized" ? node.finalized : node.latest);
      if (method === "eth_getLogs") result = [];
      let error: unknown;
      if (method === "eth_call") {
        const at = Number.parseInt(String(params[1]), 16);
        const used = node.usedFrom !== undefined && at >= node.usedFrom;
        if (at < node.latest.number - 128)
          error = { code: -32000, message: "missing trie node (state not available)" };
        result = `0x${(used ? 1 : 0).toString(16).padStart(64, "0")}`;
      }
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify(error ? { jsonrpc: "2.0", id, error } : { jsonrpc: "2.0", id, result }));
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const payment = {
  network: "eip155:84532",
  asset: ASSET,
  wallet: FROM,
  authorization: { kind: "evm-eip3009", from: FROM, nonce: NONCE, validBefore: String(VALID_BEFORE) },
};

async function resolve(node: Node) {
  const family = familyOf(payment.network);
  if (!family) throw new Error("no EVM family");
  return family.connect(await start(node)).resolve(payment, new Date());
}

describe("an unclear EVM payment, judged from the chain", () => {
  it("is settled once the head says its nonce is used", async () => {
    const node = {
      latest: { number: 20, timestamp: VALID_BEFORE - 5 },
      finalized: { number: 10, timestamp: 0 },
    };
    expect(await resolve({ ...node, usedFrom: 20 })).toMatchObject({ status: "settled", payer: FROM });
  });

  it("is failed once a finalized block is past its validBefore and the head has it unused", async () => {
    // Finality 600 blocks behind the head, past the node's state: only the head's state is read.
    const past = { number: 9_400, timestamp: VALID_BEFORE + 1 };
    const latest = { number: 10_000, timestamp: VALID_BEFORE + 1_200 };
    expect(await resolve({ latest, finalized: past })).toMatchObject({ status: "failed" });
    expect(await resolve({ latest, finalized: past, usedFrom: 9_900 })).toMatchObject({ status: "settled" });
  });

  it("stays pending when the head answering is behind the finalized block (a lagging node)", async () => {
    const finalized = { number: 50, timestamp: VALID_BEFORE + 60 };
    const latest = { number: 40, timestamp: VALID_BEFORE + 30 };
    expect(await resolve({ latest, finalized })).toEqual({ status: "pending" });
  });

  it("stays pending while only blocks not yet final are past its validBefore: a reorganisation may still use it", async () => {
    const latest = { number: 40, timestamp: VALID_BEFORE + 60 };
    const finalized = { number: 30, timestamp: VALID_BEFORE - 10 };
    expect(await resolve({ latest, finalized })).toEqual({ status: "pending" });
  });
});
