import { assetKey, type Chains, walletCanUse } from "../../chains/index.js";
import { formatUsd } from "../../money/index.js";
import type { Wallet } from "../../protocol/index.js";
import { networkLabel } from "../../protocol/index.js";
import type { EffectiveLimits, PaymentOutcome, Requirement } from "../rules/index.js";
import type { PaymentRun } from "./run.js";

/** At most this many balance reads are started before the offer is known. */
const PREFETCH_BALANCES = 3;

/** How long a balance read stands for the wallet's balance, less what this process paid since. */
export const BALANCE_FRESH_MS = 15_000;

/** Wallets remembered at most (any client can name a new wallet; the oldest reads go first). */
export const BALANCE_BOOK_SIZE = 10_000;

/** Wallet addresses arrive canonical (src/chains), so the owner is kept as it is (base58 is case sensitive). */
const keyOf = (network: string, asset: string, owner: string) =>
  `${network} ${assetKey(network, asset)} ${owner}`;

interface Known {
  /** The balance the chain reported, less what was sent from the wallet since. */
  value: bigint;
  readAt: number;
}

/**
 * The wallets' token balances as this process last read them (docs/payments.md, "Balance check").
 * The check before a payment is a courtesy, not a safety rule (the limits are the ledger's, and
 * the chain refuses what the wallet cannot cover): a read younger than {@link BALANCE_FRESH_MS},
 * less what this process sent since, answers it without a call to the chain; a payment it cannot
 * cover asks the chain again before anything is refused. A payment whose outcome is not a clean
 * settlement forgets the wallet's entry, so the next one reads the chain.
 */
export class BalanceBook {
  private readonly known = new Map<string, Known>();
  private readonly reading = new Map<string, Promise<bigint | undefined>>();

  constructor(
    private readonly chains: Pick<Chains, "balance">,
    private readonly now: () => number = Date.now,
    private readonly size: number = BALANCE_BOOK_SIZE,
  ) {}

  /** Start a read unless a recent one stands (or one is under way). */
  prefetch(network: string, asset: string, owner: string): void {
    const key = keyOf(network, asset, owner);
    if (!this.fresh(key)) void this.read(network, asset, owner);
  }

  /**
   * A balance to check `amount` against: the known one when it covers the amount, else the chain's
   * now (a wallet topped up a moment ago is not refused on an old read). Undefined when unreadable.
   */
  async covering(network: string, asset: string, owner: string, amount: bigint): Promise<bigint | undefined> {
    const known = this.fresh(keyOf(network, asset, owner));
    if (known && known.value >= amount) return known.value;
    // No recent read, or one that cannot cover it: the chain's answer (a read under way is as new).
    return this.read(network, asset, owner);
  }

  /** A payment from the wallet was sent (its intent is on record): it counts as gone. */
  debit(network: string, asset: string, owner: string, amount: bigint): void {
    const known = this.known.get(keyOf(network, asset, owner));
    if (known) known.value -= amount;
  }

  /** The chain must be asked next time (an outcome other than a clean settlement). */
  forget(network: string, asset: string, owner: string): void {
    this.known.delete(keyOf(network, asset, owner));
  }

  /** Newest last: a Map keeps insertion order, so the first entries are the oldest reads. */
  private remember(key: string, known: Known): void {
    this.known.delete(key);
    this.known.set(key, known);
    for (const oldest of this.known.keys()) {
      if (this.known.size <= this.size) break;
      this.known.delete(oldest);
    }
  }

  private fresh(key: string): Known | undefined {
    const known = this.known.get(key);
    return known && this.now() - known.readAt < BALANCE_FRESH_MS ? known : undefined;
  }

  private read(network: string, asset: string, owner: string): Promise<bigint | undefined> {
    const key = keyOf(network, asset, owner);
    const under = this.reading.get(key);
    if (under) return under;
    const readAt = this.now();
    const read = this.chains
      .balance(network, asset, owner)
      .then(
        (value) => {
          this.remember(key, { value, readAt });
          return value;
        },
        () => undefined,
      )
      .finally(() => this.reading.delete(key));
    this.reading.set(key, read);
    return read;
  }
}

/**
 * One payment's view of the book: the few networks it could pay on are read while the service is
 * probed (off the critical path) when no recent read stands; with more candidates, the one chosen
 * is read after the offer is known.
 */
export class BalanceReads {
  constructor(
    private readonly book: BalanceBook,
    private readonly wallet: Wallet,
    assets: Record<string, string[]>,
    limits: EffectiveLimits,
  ) {
    const pairs = limits.allowedNetworks
      .filter((network) => walletCanUse(wallet.chain, network))
      .flatMap((network) => (assets[network] ?? []).map((asset) => [network, asset] as const));
    if (pairs.length > PREFETCH_BALANCES) return;
    for (const [network, asset] of pairs) book.prefetch(network, asset, wallet.address);
  }

  /** The balance in the offer's asset on its network, to check `amount` against. */
  of(offer: Requirement, amount: bigint): Promise<bigint | undefined> {
    return this.book.covering(offer.network, offer.asset, this.wallet.address, amount);
  }

  /** The payment was sent: its amount counts as gone from the known balance. */
  sent(offer: Requirement, amount: bigint): void {
    this.book.debit(offer.network, offer.asset, this.wallet.address, amount);
  }

  /** Its outcome was not a clean settlement: the next payment asks the chain. */
  unsure(offer: Requirement): void {
    this.book.forget(offer.network, offer.asset, this.wallet.address);
  }
}

/** Refuse the run when the balance is unknown or below the amount; undefined when it covers it. */
export function refuseIfShort(
  run: PaymentRun,
  balance: bigint | undefined,
  amount: bigint,
  network: string,
): PaymentOutcome | undefined {
  if (balance === undefined)
    return run.refuse(
      "balance_unreadable",
      `Could not read the wallet's balance on ${networkLabel(network)}.`,
    );
  if (balance < amount) {
    return run.refuse(
      "insufficient_balance",
      `The wallet holds $${formatUsd(balance)}, less than the $${formatUsd(amount)} price.`,
      { balanceUsd: formatUsd(balance) },
    );
  }
  return undefined;
}
