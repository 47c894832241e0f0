/**
 * The Solana JSON-RPC methods the devnet's users call, answered from the local chain: the x402
 * client (`getAccountInfo`, `getLatestBlockhash`), the facilitators (`simulateTransaction`,
 * `sendTransaction`, `getSignatureStatuses`, `getTokenAccountBalance`, ...), the service's balance
 * reads and reconciler (`getTokenAccountsByOwner`, `getSlot`, `getBlockTime`, `isBlockhashValid`,
 * `getSignaturesForAddress`, `getFirstAvailableBlock`, `getTransaction`), and the time-travel
 * cheatcode of Surfpool, the node the devnet ran before (`surfnet_timeTravel`), which tests use.
 * Every commitment is answered alike: a single node's landed transaction is final. Others answer
 * "Method not found".
 */
import { getBase58Encoder, getBase64Encoder } from "@solana/kit";
import {
  type AccountEncoding,
  encodeAccount,
  status,
  TOKEN_2022_PROGRAM,
  TOKEN_PROGRAM,
  toBase58,
  tokenAmount,
  transactionAnswer,
} from "./encoding.js";
import { type LocalSolanaChain, RpcError } from "./local-chain.js";

type Params = unknown[];
type Config = Record<string, unknown>;
type Method = (params: Params) => unknown;

/** The devnet's genesis hash: Solana devnet's (the CAIP-2 id the node poses as is its prefix). */
const GENESIS_HASH = "EtWTRABZaYq6iMfeYKouRu166VU2xqa1wpn1hoaKcLk4";
const MAX_SIGNATURES_PER_PAGE = 1000;

const config = (params: Params, index: number): Config => (params[index] ?? {}) as Config;
const str = (value: unknown, what: string): string => {
  if (typeof value !== "string") throw new RpcError(-32602, `Invalid params: ${what} must be a string`);
  return value;
};
const wireOf = (value: unknown, encoding: unknown): Uint8Array => {
  const text = str(value, "transaction");
  try {
    return new Uint8Array(
      encoding === "base58" ? getBase58Encoder().encode(text) : getBase64Encoder().encode(text),
    );
  } catch {
    throw new RpcError(-32602, "Invalid params: invalid transaction encoding");
  }
};

export function solanaRpcMethods(chain: LocalSolanaChain): Record<string, Method> {
  return { ...clockMethods(chain), ...accountMethods(chain), ...transactionMethods(chain) };
}

function helpers(chain: LocalSolanaChain) {
  const context = () => ({ slot: chain.currentSlot, apiVersion: "2.2.0" });
  const withContext = (value: unknown) => ({ context: context(), value });
  const decimalsOf = (mint: string) => chain.account(mint)?.data()[44] ?? 0;
  const accountOr = (address: string, encoding: unknown) => {
    const account = chain.account(address);
    return account && account.lamports() > 0n
      ? encodeAccount(account, (encoding ?? "base64") as AccountEncoding, decimalsOf)
      : null;
  };
  const tokenAccounts = (params: Params, field: "owner" | "delegate") => {
    const who = str(params[0], field);
    const filter = config(params, 1);
    const programs = filter.programId
      ? [str(filter.programId, "programId")]
      : [TOKEN_PROGRAM, TOKEN_2022_PROGRAM];
    const mint = filter.mint ? str(filter.mint, "mint") : undefined;
    const encoding = config(params, 2).encoding ?? "base64";
    const offset = field === "owner" ? 32 : 76;
    const out: unknown[] = [];
    for (const program of programs) {
      for (const { address, account } of programAccounts(chain, program)) {
        const data = account.data();
        if (data.length < 165 || toBase58(data.slice(offset, offset + 32)) !== who) continue;
        if (mint && toBase58(data.slice(0, 32)) !== mint) continue;
        out.push({
          pubkey: address,
          account: encodeAccount(account, encoding as AccountEncoding, decimalsOf),
        });
      }
    }
    return withContext(out);
  };
  return { withContext, decimalsOf, accountOr, tokenAccounts };
}

/** The node, its clock and its blockhashes. */
function clockMethods(chain: LocalSolanaChain): Record<string, Method> {
  const { withContext } = helpers(chain);
  return {
    getHealth: () => "ok",
    getVersion: () => ({ "solana-core": "2.2.0", "feature-set": 0 }),
    getGenesisHash: () => GENESIS_HASH,
    getSlot: () => chain.currentSlot,
    getBlockHeight: () => chain.currentSlot,
    getTransactionCount: () => chain.transactions,
    getEpochInfo: () => {
      const slot = chain.currentSlot;
      return {
        absoluteSlot: slot,
        blockHeight: slot,
        epoch: 0,
        slotIndex: slot,
        slotsInEpoch: 432_000,
        transactionCount: chain.transactions,
      };
    },
    getFirstAvailableBlock: () => {
      chain.advance();
      return chain.history.firstAvailableSlot;
    },
    minimumLedgerSlot: () => {
      chain.advance();
      return chain.history.firstAvailableSlot;
    },
    getBlockTime: (params) => {
      const slot = Number(params[0]);
      const current = chain.currentSlot;
      if (!Number.isInteger(slot) || slot > current)
        throw new RpcError(-32004, `Block not available for slot ${params[0]}`);
      if (slot < chain.history.firstAvailableSlot) {
        throw new RpcError(
          -32001,
          `Block ${slot} cleaned up, does not exist on node. First available block: ${chain.history.firstAvailableSlot}`,
        );
      }
      return chain.blockTime(slot);
    },
    getLatestBlockhash: () => {
      const { blockhash, slot, lastValidBlockHeight } = chain.latestBlockhash();
      return { context: { slot, apiVersion: "2.2.0" }, value: { blockhash, lastValidBlockHeight } };
    },
    isBlockhashValid: (params) => withContext(chain.isBlockhashValid(str(params[0], "blockhash"))),
    getFeeForMessage: (params) => {
      const bytes = getBase64Encoder().encode(str(params[0], "message"));
      return withContext((bytes[0] ?? 0) & 0x80 ? (bytes[1] ?? 1) * 5000 : (bytes[0] ?? 1) * 5000);
    },
    getRecentPrioritizationFees: () => [],
    getMinimumBalanceForRentExemption: (params) =>
      Number(chain.svm.minimumBalanceForRentExemption(BigInt(Number(params[0] ?? 0)))),
  };
}

/** Accounts and token balances. */
function accountMethods(chain: LocalSolanaChain): Record<string, Method> {
  const { withContext, decimalsOf, accountOr, tokenAccounts } = helpers(chain);
  return {
    getBalance: (params) => withContext(Number(chain.account(str(params[0], "address"))?.lamports() ?? 0n)),
    getAccountInfo: (params) => withContext(accountOr(str(params[0], "address"), config(params, 1).encoding)),
    getMultipleAccounts: (params) => {
      const addresses = (params[0] ?? []) as unknown[];
      return withContext(addresses.map((a) => accountOr(str(a, "address"), config(params, 1).encoding)));
    },
    getProgramAccounts: (params) => {
      const cfg = config(params, 1);
      const filters = (cfg.filters ?? []) as Array<{
        dataSize?: number;
        memcmp?: { offset: number; bytes: string };
      }>;
      const out = programAccounts(chain, str(params[0], "program"))
        .filter(({ account }) => filters.every((f) => matches(account.data(), f)))
        .map(({ address, account }) => ({
          pubkey: address,
          account: encodeAccount(account, (cfg.encoding ?? "base64") as AccountEncoding, decimalsOf),
        }));
      return cfg.withContext ? withContext(out) : out;
    },
    getTokenAccountsByOwner: (params) => tokenAccounts(params, "owner"),
    getTokenAccountsByDelegate: (params) => tokenAccounts(params, "delegate"),
    getTokenAccountBalance: (params) => {
      const data = chain.account(str(params[0], "address"))?.data();
      if (!data || data.length < 165) throw new RpcError(-32602, "Invalid param: not a Token account");
      const amount = new DataView(data.buffer, data.byteOffset, data.byteLength).getBigUint64(64, true);
      return withContext(tokenAmount(amount, decimalsOf(toBase58(data.slice(0, 32)))));
    },
    getTokenSupply: (params) => {
      const data = chain.account(str(params[0], "mint"))?.data();
      if (data?.length !== 82) throw new RpcError(-32602, "Invalid param: not a Token mint");
      const supply = new DataView(data.buffer, data.byteOffset, data.byteLength).getBigUint64(36, true);
      return withContext(tokenAmount(supply, data[44] ?? 0));
    },
  };
}

/** Transactions: simulate, send, statuses, history; and time travel. */
function transactionMethods(chain: LocalSolanaChain): Record<string, Method> {
  const { withContext } = helpers(chain);
  return {
    simulateTransaction: (params) => {
      const cfg = config(params, 1);
      const wire = wireOf(params[0], cfg.encoding);
      const replace = cfg.replaceRecentBlockhash === true;
      const sim = chain.simulate(wire, {
        sigVerify: cfg.sigVerify === true,
        replaceRecentBlockhash: replace,
      });
      return withContext({
        err: sim.err,
        logs: sim.logs,
        accounts: null,
        unitsConsumed: sim.unitsConsumed,
        returnData: null,
        ...(cfg.innerInstructions ? { innerInstructions: sim.innerInstructions } : {}),
        ...(replace ? { replacementBlockhash: chain.latestBlockhash() } : {}),
      });
    },
    sendTransaction: (params) => {
      const cfg = config(params, 1);
      return chain.send(wireOf(params[0], cfg.encoding), { skipPreflight: cfg.skipPreflight === true });
    },
    getSignatureStatuses: (params) => {
      const signatures = (params[0] ?? []) as unknown[];
      return withContext(signatures.map((s) => status(chain.history.get(str(s, "signature")))));
    },
    getSignaturesForAddress: (params) => {
      const cfg = config(params, 1);
      const limit = Math.min(Number(cfg.limit ?? MAX_SIGNATURES_PER_PAGE), MAX_SIGNATURES_PER_PAGE);
      chain.advance();
      return chain.history
        .forAddress(str(params[0], "address"), {
          limit,
          ...(typeof cfg.before === "string" ? { before: cfg.before } : {}),
          ...(typeof cfg.until === "string" ? { until: cfg.until } : {}),
        })
        .map((tx) => ({
          signature: tx.signature,
          slot: tx.slot,
          err: tx.err,
          memo: tx.memo,
          blockTime: tx.blockTime,
          confirmationStatus: "finalized",
        }));
    },
    getTransaction: (params) => {
      const tx = chain.history.get(str(params[0], "signature"));
      return tx ? transactionAnswer(tx, config(params, 1).encoding) : null;
    },
    surfnet_timeTravel: (params) => {
      const cfg = config(params, 0);
      if (typeof cfg.absoluteSlot === "number") chain.travelToSlot(cfg.absoluteSlot);
      else if (typeof cfg.absoluteTimestamp === "number") chain.timeTravel(cfg.absoluteTimestamp);
      else throw new RpcError(-32602, "Invalid params: absoluteSlot or absoluteTimestamp (ms) is supported");
      return { absoluteSlot: chain.currentSlot, epoch: 0 };
    },
  };
}

function programAccounts(chain: LocalSolanaChain, program: string) {
  return chain.svm
    .getProgramAccounts(new Uint8Array(getBase58Encoder().encode(program)))
    .map((a) => ({ address: toBase58(a.address), account: a.account() }));
}

function matches(
  data: Uint8Array,
  filter: { dataSize?: number; memcmp?: { offset: number; bytes: string; encoding?: string } },
) {
  if (filter.dataSize !== undefined && data.length !== filter.dataSize) return false;
  if (filter.memcmp) {
    const want =
      filter.memcmp.encoding === "base64"
        ? Buffer.from(filter.memcmp.bytes, "base64")
        : getBase58Encoder().encode(filter.memcmp.bytes);
    const at = filter.memcmp.offset;
    return Buffer.from(data.slice(at, at + want.length)).equals(Buffer.from(want));
  }
  return true;
}
