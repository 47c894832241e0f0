import {
  type Address,
  type EIP1193Provider,
  encodeAbiParameters,
  getAddress,
  type Hex,
  keccak256,
  numberToHex,
  pad,
  parseAbiItem,
  toEventSelector,
} from "viem";
import { loadArtifacts } from "./artifacts.js";
import { type EdrProvider, rawRequest } from "./edr.js";
import type { GatedProvider } from "./gate.js";
import { deployContracts, deployerClient } from "./token.js";

/**
 * Renewing the EVM chain: EDR keeps every block and every state it ever had in memory (12-35 KB
 * per payment, with no setting to drop them: docs/devnet.md, "How long it lasts"), so after a
 * while the devnet moves to a new chain (a new EDR provider in a process of its own, edr.ts; the
 * old process ends, and its memory with it: EDR frees none of it while its process lives) with
 * today's state carried over: Multicall3 and the token deployed again as at
 * the start (the deployer's first transaction: the same address), the token's supply, every
 * balance and allowance it ever recorded, and every authorization used or cancelled whose signed
 * window is still open, unknown or closed less than 5 minutes ago (`dropClosed`), written back by
 * the token's minter-only `restore*` functions (ordinary transactions: EDR keeps state set by `hardhat_setStorageAt` in a way that made every
 * later block cost hundreds of KB), and the ETH balance and nonce of every account that paid gas
 * or was funded. What is dropped is history: blocks, receipts and logs from before (block numbers
 * start again from 0). The service does not read those: it judges an EIP-3009 payment by the
 * token's `authorizationState`, which is carried. A chain with anything the renewal cannot carry
 * (a contract of unknown layout, the token's code replaced, a storage slot set by hand) is not
 * renewed.
 */

/** DevUSDC's storage layout (contracts/DevUSDC.sol): slot numbers of its state variables. */
const SLOT = { totalSupply: 0n, balanceOf: 1n, allowance: 2n, authorizationStates: 3n } as const;

const EVENTS = {
  transfer: parseAbiItem("event Transfer(address indexed from, address indexed to, uint256 value)"),
  approval: parseAbiItem("event Approval(address indexed owner, address indexed spender, uint256 value)"),
  used: parseAbiItem("event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)"),
  canceled: parseAbiItem("event AuthorizationCanceled(address indexed authorizer, bytes32 indexed nonce)"),
};

/** Solidity's slot of `mapping[key]` when the mapping sits at `slot`. */
export function mappingSlot(key: Hex, slot: Hex | bigint): Hex {
  const base = typeof slot === "bigint" ? numberToHex(slot, { size: 32 }) : slot;
  return keccak256(encodeAbiParameters([{ type: "bytes32" }, { type: "bytes32" }], [pad(key), base]));
}

const addressKey = (address: string): Hex => pad(getAddress(address) as Hex);

/** How long a used authorization is carried past its window's end (seconds of chain time). */
export const KEPT_AFTER_CLOSE_S = 300n;

/** What carries over from one renewal to the next (the logs before it are gone by then). */
export class CarriedState {
  readonly holders = new Set<Address>();
  readonly approvals = new Set<string>();
  /** `${authorizer}:${nonce}` -> validBefore, or null when unknown (kept for good). */
  readonly authorizations = new Map<string, bigint | null>();
  readonly accounts = new Set<Address>();

  /** The token's storage slots this state covers (tests). */
  tokenSlots(): Hex[] {
    const slots: Hex[] = [numberToHex(SLOT.totalSupply, { size: 32 })];
    for (const holder of this.holders) slots.push(mappingSlot(addressKey(holder), SLOT.balanceOf));
    for (const pair of this.approvals) {
      const [owner, spender] = pair.split(":") as [Address, Address];
      slots.push(mappingSlot(addressKey(spender), mappingSlot(addressKey(owner), SLOT.allowance)));
    }
    for (const key of this.authorizations.keys()) {
      const [authorizer, nonce] = key.split(":") as [Address, Hex];
      slots.push(mappingSlot(nonce, mappingSlot(addressKey(authorizer), SLOT.authorizationStates)));
    }
    return slots;
  }

  /**
   * Forgets used authorizations whose signed window closed more than KEPT_AFTER_CLOSE_S before
   * `chainSeconds`. Closed, one cannot be replayed; but a service still reads its state to judge a
   * payment it lost track of (killed mid-payment, it resolves the row at its restart; another
   * instance, at its next sweep, within about 90 s), and on a new chain a dropped one would read
   * unused past its window: a payment that moved money called failed. Five minutes: each one kept
   * is a storage slot every renewal reads and writes (about 2 ms each; 15 minutes made a renewal
   * at 5 EVM payments a second hold calls for seconds).
   */
  dropClosed(chainSeconds: bigint): void {
    for (const [key, validBefore] of this.authorizations) {
      if (validBefore !== null && validBefore + KEPT_AFTER_CLOSE_S <= chainSeconds)
        this.authorizations.delete(key);
    }
  }
}

export interface RenewalPlan {
  token: Address;
  /** Accounts whose ETH balance and nonce are carried, besides those the gate saw send. */
  accounts: () => Iterable<Address>;
  /** A new, empty chain configured as the first. */
  fresh: () => Promise<EdrProvider>;
}

/** How many entries one `restore*` transaction writes (well within a block's gas). */
const RESTORE_BATCH = 400;

type Call = (method: string, params: unknown[]) => Promise<unknown>;

export interface Renewal {
  /** Transactions the chain had since the last renewal. */
  transactions: number;
  slots: number;
  accounts: number;
  ms: number;
}

/**
 * Renews the chain behind `gate`, which must be closed (no call under way or let through but
 * ours): reads what to carry from the old chain, writes it into a new one, checks every value,
 * then the gate forwards to the new chain and the old one stops.
 */
export async function renewChain(
  gate: GatedProvider,
  plan: RenewalPlan,
  carried: CarriedState,
): Promise<Renewal> {
  const started = performance.now();
  const old = gate.inner;
  const call: Call = (method, params) => rawRequest(old, method, params);
  const latest = (await call("eth_getBlockByNumber", ["latest", false])) as { timestamp: Hex };
  await collectTokenKeys(call, plan.token, carried, gate.windows);
  carried.dropClosed(BigInt(latest.timestamp));
  // Accounts whose ETH and nonce matter: the devnet's own, the funded ones, those that paid gas.
  for (const account of [...plan.accounts(), ...gate.senders]) carried.accounts.add(account);
  const state = await readToken(call, plan.token, carried);
  const accounts = [...carried.accounts];
  const balances: unknown[] = [];
  const nonces: unknown[] = [];
  for (const account of accounts) {
    balances.push(await call("eth_getBalance", [account, "latest"]));
    nonces.push(await call("eth_getTransactionCount", [account, "latest"]));
  }

  const next = await plan.fresh();
  try {
    const now = BigInt(Math.floor(Date.now() / 1000));
    if (BigInt(latest.timestamp) > now)
      await rawRequest(next, "evm_setNextBlockTimestamp", [latest.timestamp]);
    const token = await deployContracts(next);
    if (token.toLowerCase() !== plan.token.toLowerCase())
      throw new Error(`the token was deployed at ${token}, not ${plan.token}`);
    await writeToken(next, plan.token, state);
    for (const [i, address] of accounts.entries()) {
      await rawRequest(next, "hardhat_setBalance", [address, balances[i]]);
      const nonce = BigInt(nonces[i] as Hex);
      if (nonce > BigInt((await rawRequest(next, "eth_getTransactionCount", [address, "latest"])) as Hex))
        await rawRequest(next, "hardhat_setNonce", [address, numberToHex(nonce)]);
    }
    const back = await readToken((m, p) => rawRequest(next, m, p), plan.token, carried);
    if (JSON.stringify(back, bigints) !== JSON.stringify(state, bigints))
      throw new Error("the new chain's token state differs from the old one's");
  } catch (error) {
    await next.close();
    throw error;
  }
  gate.inner = next;
  await old.close();
  const transactions = gate.sent;
  gate.sent = 0;
  gate.senders.clear();
  const chainNow = BigInt(latest.timestamp);
  for (const [key, validBefore] of gate.windows) if (validBefore <= chainNow) gate.windows.delete(key);
  return {
    transactions,
    slots: 1 + state.holders.length + state.approvals.length + state.authorizations.length,
    accounts: accounts.length,
    ms: performance.now() - started,
  };
}

const bigints = (_key: string, value: unknown) => (typeof value === "bigint" ? value.toString() : value);

interface TokenState {
  supply: bigint;
  holders: Array<[Address, bigint]>;
  approvals: Array<[Address, Address, bigint]>;
  authorizations: Array<[Address, Hex]>;
}

/**
 * The token's values at the carried keys (storage reads: cheaper than calls), one read at a time:
 * EDR answering hundreds of reads at once made every block it mined afterwards cost about 700 KB
 * instead of about 50 (800 parallel reads after 800 payments; docs/devnet.md, "How long it lasts").
 */
async function readToken(call: Call, token: Address, carried: CarriedState): Promise<TokenState> {
  const word = async (slot: Hex) => BigInt((await call("eth_getStorageAt", [token, slot, "latest"])) as Hex);
  const state: TokenState = {
    supply: await word(numberToHex(SLOT.totalSupply, { size: 32 })),
    holders: [],
    approvals: [],
    authorizations: [],
  };
  for (const holder of carried.holders)
    state.holders.push([holder, await word(mappingSlot(addressKey(holder), SLOT.balanceOf))]);
  for (const pair of carried.approvals) {
    const [owner, spender] = pair.split(":") as [Address, Address];
    const slot = mappingSlot(addressKey(spender), mappingSlot(addressKey(owner), SLOT.allowance));
    state.approvals.push([owner, spender, await word(slot)]);
  }
  for (const key of carried.authorizations.keys()) {
    const [authorizer, nonce] = key.split(":") as [Address, Hex];
    const used = await word(
      mappingSlot(nonce, mappingSlot(addressKey(authorizer), SLOT.authorizationStates)),
    );
    if (used !== 0n) state.authorizations.push([getAddress(authorizer), nonce]);
  }
  return state;
}

/** Writes `state` into the freshly deployed token by its minter-only `restore*` functions. */
async function writeToken(provider: EIP1193Provider, token: Address, state: TokenState): Promise<void> {
  const client = deployerClient(provider);
  const abi = loadArtifacts().contracts.DevUSDC.abi;
  const send = async (functionName: string, args: readonly unknown[]) =>
    client.waitForTransactionReceipt({
      hash: await client.writeContract({ address: token, abi, functionName, args } as never),
    });
  const holders = state.holders.filter(([, balance]) => balance > 0n);
  await send("restoreBalances", [state.supply, [], []]);
  for (const batch of chunks(holders))
    await send("restoreBalances", [state.supply, batch.map(([h]) => h), batch.map(([, b]) => b)]);
  for (const batch of chunks(state.approvals.filter(([, , v]) => v > 0n)))
    await send("restoreAllowances", [
      batch.map(([o]) => o),
      batch.map(([, s]) => s),
      batch.map(([, , v]) => v),
    ]);
  for (const batch of chunks(state.authorizations))
    await send("restoreAuthorizations", [batch.map(([a]) => a), batch.map(([, n]) => n)]);
}

function chunks<T>(items: T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += RESTORE_BATCH) out.push(items.slice(i, i + RESTORE_BATCH));
  return out;
}

/** Every holder, approval and authorization the token's logs name since the chain started. */
async function collectTokenKeys(
  call: Call,
  token: Address,
  carried: CarriedState,
  windows: ReadonlyMap<string, bigint>,
): Promise<void> {
  const logs = (await call("eth_getLogs", [
    { address: token, fromBlock: "0x0", toBlock: "latest" },
  ])) as Array<{
    topics: Hex[];
  }>;
  const ids = Object.fromEntries(
    Object.entries(EVENTS).map(([name, event]) => [toEventSelector(event), name]),
  );
  const address = (word: Hex | undefined) => getAddress(`0x${(word ?? "").slice(26)}`);
  for (const { topics } of logs) {
    const kind = ids[topics[0] ?? ""];
    if (kind === "transfer") {
      carried.holders.add(address(topics[1]));
      carried.holders.add(address(topics[2]));
    } else if (kind === "approval") {
      carried.approvals.add(`${address(topics[1])}:${address(topics[2])}`);
    } else if (kind === "used" || kind === "canceled") {
      const key = `${address(topics[1]).toLowerCase()}:${(topics[2] ?? "").toLowerCase()}`;
      carried.authorizations.set(key, kind === "used" ? (windows.get(key) ?? null) : null);
    }
  }
}
