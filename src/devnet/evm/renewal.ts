import {
  type Address,
  encodeAbiParameters,
  getAddress,
  type Hex,
  keccak256,
  numberToHex,
  pad,
  parseAbiItem,
  toEventSelector,
} from "viem";
import type { GatedProvider } from "./gate.js";

/**
 * Renewing the EVM chain: EDR keeps every block and every state it ever had in memory (12-35 KB
 * per payment, with no setting to drop them: docs/devnet.md, "How long it lasts"), so after a
 * while the devnet starts the chain afresh (`hardhat_reset`) with today's state carried over: the
 * token's code and every storage slot the devnet's token uses (its supply, every balance and
 * allowance it ever recorded, every authorization used or cancelled whose signed window is still
 * open or unknown), Multicall3's code, and the ETH balance and nonce of every account that paid
 * gas or was funded. What is dropped is history: blocks, receipts and logs from before (block
 * numbers start again from 0). The service does not read those: it judges an EIP-3009 payment by
 * the token's `authorizationState`, which is carried. A chain with anything the renewal cannot
 * carry (a contract of unknown layout, a storage slot set by hand) is not renewed.
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

/** What carries over from one renewal to the next (the logs before it are gone by then). */
export class CarriedState {
  readonly holders = new Set<Address>();
  readonly approvals = new Set<string>();
  /** `${authorizer}:${nonce}` -> validBefore, or null when unknown (kept for good). */
  readonly authorizations = new Map<string, bigint | null>();
  readonly accounts = new Set<Address>();

  /** The token's storage slots this state covers. */
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

  /** Forgets used authorizations whose signed window closed before `chainSeconds`: they cannot be replayed. */
  dropClosed(chainSeconds: bigint): void {
    for (const [key, validBefore] of this.authorizations) {
      if (validBefore !== null && validBefore <= chainSeconds) this.authorizations.delete(key);
    }
  }
}

export interface RenewalPlan {
  token: Address;
  /** Contracts whose code is carried (they keep no storage of their own). */
  codeOnly: Address[];
  /** Accounts whose ETH balance and nonce are carried, besides those the gate saw send. */
  accounts: () => Iterable<Address>;
}

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
 * ours). Reads what to carry, resets, writes it back, and checks every value it wrote.
 */
export async function renewChain(
  gate: GatedProvider,
  plan: RenewalPlan,
  carried: CarriedState,
): Promise<Renewal> {
  const started = performance.now();
  const call: Call = (method, params) =>
    (
      gate.inner as unknown as { request(a: { method: string; params: unknown[] }): Promise<unknown> }
    ).request({
      method,
      params,
    });
  const latest = (await call("eth_getBlockByNumber", ["latest", false])) as { timestamp: Hex };
  await collectTokenKeys(call, plan.token, carried, gate.windows);
  carried.dropClosed(BigInt(latest.timestamp));
  for (const account of [...plan.accounts(), ...gate.senders, ...carried.holders])
    carried.accounts.add(account);

  const slots = carried.tokenSlots();
  const storage = await Promise.all(
    slots.map((slot) => call("eth_getStorageAt", [plan.token, slot, "latest"])),
  );
  const codes = await Promise.all(
    [plan.token, ...plan.codeOnly].map((a) => call("eth_getCode", [a, "latest"])),
  );
  const accounts = [...carried.accounts];
  const balances = await Promise.all(accounts.map((a) => call("eth_getBalance", [a, "latest"])));
  const nonces = await Promise.all(accounts.map((a) => call("eth_getTransactionCount", [a, "latest"])));

  await call("hardhat_reset", []);
  const now = BigInt(Math.floor(Date.now() / 1000));
  if (BigInt(latest.timestamp) > now) await call("evm_setNextBlockTimestamp", [latest.timestamp]);
  for (const [i, address] of [plan.token, ...plan.codeOnly].entries())
    await call("hardhat_setCode", [address, codes[i]]);
  for (const [i, slot] of slots.entries())
    await call("hardhat_setStorageAt", [plan.token, slot, pad(storage[i] as Hex)]);
  for (const [i, address] of accounts.entries()) {
    await call("hardhat_setBalance", [address, balances[i]]);
    await call("hardhat_setNonce", [address, nonces[i]]);
  }

  const back = await Promise.all(slots.map((slot) => call("eth_getStorageAt", [plan.token, slot, "latest"])));
  for (const [i, value] of back.entries()) {
    if (BigInt(value as Hex) !== BigInt(storage[i] as Hex))
      throw new Error(`renewal: token slot ${slots[i]} reads ${value}, not ${storage[i]}`);
  }
  const transactions = gate.sent;
  gate.sent = 0;
  gate.senders.clear();
  for (const [key, validBefore] of gate.windows) if (validBefore <= now) gate.windows.delete(key);
  return { transactions, slots: slots.length, accounts: accounts.length, ms: performance.now() - started };
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
