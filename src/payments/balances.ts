import { type Chains, walletCanUse } from "../chains/index.js";
import { formatUsd } from "../money/index.js";
import type { Wallet } from "../protocol/index.js";
import type { PaymentOutcome } from "./outcome.js";
import type { EffectiveLimits, Requirement } from "./policy.js";
import type { PaymentRun } from "./run.js";

/** At most this many balance reads are started before the offer is known. */
const PREFETCH_BALANCES = 3;

const keyOf = (network: string, asset: string) => `${network} ${asset.toLowerCase()}`;

/**
 * The wallet's token balance, read before a payment is signed or asked for. The few networks it
 * could pay on are read while the service is probed (off the critical path); with more candidates,
 * the one chosen is read after the offer is known. A failed read is undefined.
 */
export class BalanceReads {
  private readonly reads = new Map<string, Promise<bigint | undefined>>();

  constructor(
    private readonly chains: Pick<Chains, "balance">,
    private readonly wallet: Wallet,
    assets: Record<string, string[]>,
    limits: EffectiveLimits,
  ) {
    const pairs = limits.allowedNetworks
      .filter((network) => walletCanUse(wallet.chain, network))
      .flatMap((network) => (assets[network] ?? []).map((asset) => [network, asset] as const));
    if (pairs.length > PREFETCH_BALANCES) return;
    for (const [network, asset] of pairs) this.reads.set(keyOf(network, asset), this.read(network, asset));
  }

  /** The balance in the offer's asset on its network. */
  of(offer: Requirement): Promise<bigint | undefined> {
    return this.reads.get(keyOf(offer.network, offer.asset)) ?? this.read(offer.network, offer.asset);
  }

  private read(network: string, asset: string): Promise<bigint | undefined> {
    return this.chains.balance(network, asset, this.wallet.address).catch(() => undefined);
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
    return run.refuse("balance_unreadable", `Could not read the wallet's balance on ${network}.`);
  if (balance < amount) {
    return run.refuse(
      "insufficient_balance",
      `The wallet holds $${formatUsd(balance)}, less than the $${formatUsd(amount)} price.`,
      { balanceUsd: formatUsd(balance) },
    );
  }
  return undefined;
}
