/**
 * The devnet's Solana node: the local chain (`local-chain.ts`, LiteSVM inside) behind a JSON-RPC
 * server on loopback (`rpc.ts`), with the USDC mint planted and the wallets funded. Its history is
 * bounded (`history.ts`), so its memory and its answer times stay flat however long it runs
 * (docs/devnet.md, "How long it lasts").
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { getAddressEncoder, getProgramDerivedAddress } from "@solana/kit";
import { TOKEN_PROGRAM, toBase58 } from "./encoding.js";
import type { LiteSvmBinding } from "./litesvm.js";
import { LocalSolanaChain, RpcError } from "./local-chain.js";
import { solanaRpcMethods } from "./rpc.js";

const ATA_PROGRAM = "ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL";
const SYSTEM_PROGRAM = "11111111111111111111111111111111";
/** Rent-exempt minimum of a 165-byte token account. */
const TOKEN_ACCOUNT_RENT = 2_039_280n;
const MAX_BODY_BYTES = 4 * 1024 * 1024;

export interface LocalNodeOptions {
  slotTimeMs: number;
  /** History kept: this many seconds, at most this many transactions (docs/devnet.md). */
  historySeconds: number;
  historyMaxTransactions: number;
  mint: { address: string; data: Uint8Array; lamports: bigint };
  now?: () => number;
}

export interface LocalNode {
  rpcUrl: string;
  chain: LocalSolanaChain;
  setLamports(owner: string, lamports: bigint): void;
  /** Creates (or overwrites) `owner`'s associated token account of the mint, holding `amount`. */
  setTokenBalance(owner: string, amount: bigint): Promise<void>;
  stop(): Promise<void>;
}

export async function startLocalNode(binding: LiteSvmBinding, options: LocalNodeOptions): Promise<LocalNode> {
  const chain = new LocalSolanaChain(binding, {
    slotTimeMs: options.slotTimeMs,
    history: {
      maxAgeSlots: Math.ceil((options.historySeconds * 1000) / options.slotTimeMs),
      maxEntries: options.historyMaxTransactions,
    },
    ...(options.now ? { now: options.now } : {}),
  });
  const mint = options.mint;
  chain.setAccount(mint.address, mint.lamports, mint.data, TOKEN_PROGRAM);
  const methods = solanaRpcMethods(chain);
  const server = createServer((req, res) => {
    handle(methods, req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  let stopped: Promise<void> | undefined;
  return {
    rpcUrl: `http://127.0.0.1:${port}`,
    chain,
    setLamports(owner, lamports) {
      const account = chain.account(owner);
      const owned = account ? toBase58(account.owner()) : SYSTEM_PROGRAM;
      chain.setAccount(owner, lamports, account?.data() ?? new Uint8Array(), owned);
    },
    async setTokenBalance(owner, amount) {
      const ata = await associatedTokenAddress(owner, mint.address);
      chain.setAccount(ata, TOKEN_ACCOUNT_RENT, tokenAccountData(mint.address, owner, amount), TOKEN_PROGRAM);
    },
    stop() {
      stopped ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return stopped;
    },
  };
}

async function handle(
  methods: Record<string, (params: unknown[]) => unknown>,
  req: IncomingMessage,
  res: ServerResponse,
) {
  if (req.method !== "POST") {
    res.writeHead(req.method === "GET" ? 200 : 405, { "content-type": "text/plain" });
    res.end(req.method === "GET" ? "Solana JSON-RPC (x402 devnet)\n" : "");
    return;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) {
      res.writeHead(413).end();
      return;
    }
    chunks.push(chunk as Buffer);
  }
  let body: unknown;
  try {
    body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
  } catch {
    return reply(res, { jsonrpc: "2.0", id: null, error: { code: -32700, message: "Parse error" } });
  }
  const answer = Array.isArray(body) ? body.map((call) => dispatch(methods, call)) : dispatch(methods, body);
  reply(res, answer);
}

function dispatch(methods: Record<string, (params: unknown[]) => unknown>, call: unknown) {
  const {
    id = null,
    method,
    params = [],
  } = (call ?? {}) as { id?: unknown; method?: unknown; params?: unknown };
  const run = typeof method === "string" && Object.hasOwn(methods, method) ? methods[method] : undefined;
  if (!run) return { jsonrpc: "2.0", id, error: { code: -32601, message: "Method not found" } };
  try {
    return { jsonrpc: "2.0", id, result: run(Array.isArray(params) ? params : [params]) };
  } catch (error) {
    if (error instanceof RpcError) {
      return {
        jsonrpc: "2.0",
        id,
        error: {
          code: error.code,
          message: error.message,
          ...(error.data === undefined ? {} : { data: error.data }),
        },
      };
    }
    return {
      jsonrpc: "2.0",
      id,
      error: { code: -32603, message: error instanceof Error ? error.message : String(error) },
    };
  }
}

/** JSON with bigints written as numbers (rent epochs are u64). */
function reply(res: ServerResponse, answer: unknown) {
  const text = JSON.stringify(answer, (_key, value) =>
    typeof value === "bigint" ? `__u64:${value}` : value,
  ).replace(/"__u64:(\d+)"/g, "$1");
  res.writeHead(200, { "content-type": "application/json" });
  res.end(text);
}

export async function associatedTokenAddress(owner: string, mint: string): Promise<string> {
  const encoder = getAddressEncoder();
  const [address] = await getProgramDerivedAddress({
    programAddress: ATA_PROGRAM as never,
    seeds: [
      encoder.encode(owner as never),
      encoder.encode(TOKEN_PROGRAM as never),
      encoder.encode(mint as never),
    ],
  });
  return address;
}

/** SPL Token account layout (165 bytes): mint, owner, amount, no delegate, initialized. */
function tokenAccountData(mint: string, owner: string, amount: bigint): Uint8Array {
  const data = new Uint8Array(165);
  const encoder = getAddressEncoder();
  data.set(encoder.encode(mint as never), 0);
  data.set(encoder.encode(owner as never), 32);
  new DataView(data.buffer).setBigUint64(64, amount, true);
  data[108] = 1;
  return data;
}
