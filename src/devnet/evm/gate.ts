import {
  type Address,
  decodeFunctionData,
  type EIP1193Provider,
  getAddress,
  type Hex,
  parseTransaction,
} from "viem";
import { loadArtifacts } from "./artifacts.js";
import type { EdrProvider } from "./edr.js";

type Request = { method: string; params?: unknown };
type Loose = { request(args: Request): Promise<unknown> };

/** The calls that send a transaction: held while the chain is renewed, their receipts awaited. */
const SENDS = new Set(["eth_sendRawTransaction", "eth_sendTransaction"]);
/** State changes of a kind the renewal cannot carry over (an unknown contract's storage, snapshots). */
const FOREIGN = new Set([
  "hardhat_setStorageAt",
  "evm_snapshot",
  "evm_revert",
  "hardhat_reset",
  "anvil_setStorageAt",
  "anvil_reset",
]);
/** A sent transaction whose receipt nobody read within this long is no longer waited for. */
const UNREAD_RECEIPT_MS = 30_000;

/**
 * The EVM chain's provider as everyone reaches it (the JSON-RPC server and the devnet itself),
 * in front of EDR's own: it can hold every call while the chain is renewed (renewal.ts), and it
 * notes what the renewal needs to know: transactions sent whose receipt is not read yet (a
 * renewal waits for them, or their receipts would vanish), the addresses that sent transactions,
 * the signed window (`validBefore`) of each EIP-3009 authorization sent to the token (so a used
 * one whose window closed need not be carried), and the first change it could not carry over (a
 * contract of unknown layout deployed, a storage slot set by hand, a snapshot): once there is one,
 * the chain is not renewed.
 */
export class GatedProvider {
  /** Transactions sent since the last renewal. */
  sent = 0;
  /** Why the chain can no longer be renewed, once something made it so. */
  foreign: string | undefined;
  readonly senders = new Set<Address>();
  /** `${authorizer}:${nonce}` (lower case) -> validBefore (unix seconds) of authorizations sent. */
  readonly windows = new Map<string, bigint>();
  private readonly unreceipted = new Map<Hex, number>();
  private inFlight = 0;
  private sendsInFlight = 0;
  /** While a renewal holds calls: sends only at first, then every call (`all`). */
  private closed: { all: boolean; opened: Promise<void>; open: () => void } | undefined;

  constructor(
    /** EDR's provider: a renewal replaces it with the new chain's. */
    public inner: EdrProvider,
    private readonly renewable: { code: ReadonlySet<string>; token: Address },
    private readonly now: () => number = Date.now,
  ) {}

  /** EIP-1193: waits while the gate holds this kind of call, then passes it on and takes note. */
  async request(args: Request): Promise<unknown> {
    while (this.closed && (this.closed.all || SENDS.has(args.method))) await this.closed.opened;
    const send = SENDS.has(args.method);
    this.inFlight++;
    if (send) this.sendsInFlight++;
    try {
      this.noteBefore(args);
      const result = await (this.inner as unknown as Loose).request(args);
      this.noteAfter(args, result);
      return result;
    } finally {
      this.inFlight--;
      if (send) this.sendsInFlight--;
    }
  }

  // The JSON-RPC server's WebSocket subscriptions listen on the provider itself.
  addListener(event: string, listener: (...args: unknown[]) => void): this {
    (this.inner as unknown as { addListener(e: string, l: unknown): void }).addListener(event, listener);
    return this;
  }

  removeListener(event: string, listener: (...args: unknown[]) => void): this {
    (this.inner as unknown as { removeListener(e: string, l: unknown): void }).removeListener(
      event,
      listener,
    );
    return this;
  }

  /** The in-process provider as viem's typed one (its calls go through the gate). */
  asProvider(): EIP1193Provider {
    return this as unknown as EIP1193Provider;
  }

  /**
   * Holds new transactions, then waits (at most `deadlineMs`) until every one sent has had its
   * receipt read; then holds every call and waits for those under way. True when closed; false
   * (and open again) when receipts were still awaited at the deadline.
   */
  async close(deadlineMs: number): Promise<boolean> {
    let open = () => {};
    const opened = new Promise<void>((resolve) => {
      open = resolve;
    });
    this.closed = { all: false, opened, open };
    const until = this.now() + deadlineMs;
    while (this.pendingReceipts() > 0 || this.sendsInFlight > 0) {
      if (this.now() > until) {
        this.open();
        return false;
      }
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    this.closed.all = true;
    while (this.inFlight > 0) await new Promise((resolve) => setTimeout(resolve, 1));
    return true;
  }

  open(): void {
    const closed = this.closed;
    this.closed = undefined;
    closed?.open();
  }

  private pendingReceipts(): number {
    const stale = this.now() - UNREAD_RECEIPT_MS;
    for (const [hash, at] of this.unreceipted) if (at < stale) this.unreceipted.delete(hash);
    return this.unreceipted.size;
  }

  private noteBefore({ method, params }: Request): void {
    const list = Array.isArray(params) ? params : [];
    if (FOREIGN.has(method)) this.foreign ??= `${method} was called`;
    if (method === "hardhat_setCode" || method === "anvil_setCode") {
      const target = String(list[0] ?? "").toLowerCase();
      if (!this.renewable.code.has(target)) this.foreign ??= `code was set at ${target}`;
    }
    if (method === "eth_sendTransaction") {
      const tx = (list[0] ?? {}) as { to?: string | null; from?: string };
      if (!tx.to) this.foreign ??= "a contract was deployed";
      if (tx.from) this.senders.add(getAddress(tx.from));
    }
    if (method === "eth_sendRawTransaction") this.noteRaw(list[0] as Hex);
  }

  private noteAfter({ method, params }: Request, result: unknown): void {
    const list = Array.isArray(params) ? params : [];
    if (SENDS.has(method) && typeof result === "string") {
      this.sent++;
      this.unreceipted.set(result.toLowerCase() as Hex, this.now());
    }
    if (method === "eth_getTransactionReceipt" && result && typeof result === "object") {
      this.unreceipted.delete(String(list[0]).toLowerCase() as Hex);
      const from = (result as { from?: string }).from;
      if (from) this.senders.add(getAddress(from));
    }
  }

  /** A raw transaction: a deployment makes the chain foreign; an authorization's window is kept. */
  private noteRaw(raw: Hex): void {
    let tx: ReturnType<typeof parseTransaction>;
    try {
      tx = parseTransaction(raw);
    } catch {
      return; // EDR refuses it as well
    }
    if (!tx.to) {
      this.foreign ??= "a contract was deployed";
      return;
    }
    if (tx.to.toLowerCase() !== this.renewable.token.toLowerCase() || !tx.data) return;
    try {
      const call = decodeFunctionData({ abi: loadArtifacts().contracts.DevUSDC.abi, data: tx.data });
      if (
        call.functionName !== "transferWithAuthorization" &&
        call.functionName !== "receiveWithAuthorization"
      )
        return;
      const [from, , , , validBefore, nonce] = call.args as readonly [
        Address,
        Address,
        bigint,
        bigint,
        bigint,
        Hex,
      ];
      this.windows.set(`${from.toLowerCase()}:${nonce.toLowerCase()}`, validBefore);
    } catch {
      // Another call: nothing to note.
    }
  }
}
