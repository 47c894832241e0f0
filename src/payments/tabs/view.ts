import type { WalletSigningRequest } from "../../chains/index.js";
import { formatUsd } from "../../money/index.js";
import { networkLabel, type TabView, utcClock } from "../../protocol/index.js";
import type { TabRecord } from "../ports/index.js";

const money = (atomic: bigint) => ({ atomic: atomic.toString(), usd: formatUsd(atomic) });

/** A tab as clients see it: no token, no key, no signature. */
export function viewOf(tab: TabRecord, usage: { committed: bigint; settled: bigint }): TabView {
  const usable = tab.status === "open" || tab.status === "funding" || tab.status === "awaiting_signature";
  const left = usable && tab.amount > usage.committed ? tab.amount - usage.committed : 0n;
  return {
    tabId: tab.tabId,
    status: tab.status,
    wallet: tab.wallet,
    network: tab.network,
    session: tab.session,
    amount: money(tab.amount),
    spent: money(usage.settled),
    left: money(left),
    endsAt: tab.endsAt.toISOString(),
    ...(tab.fundingTx ? { fundingTx: tab.fundingTx } : {}),
    ...(tab.refundTx ? { refundTx: tab.refundTx } : {}),
    // What a closing tab returned (an expired or failed one read empty keeps 0 here: not shown).
    ...(tab.refunded !== null && (tab.status === "closing" || tab.status === "closed")
      ? { refunded: money(tab.refunded) }
      : {}),
    ...(tab.error ? { error: tab.error } : {}),
  };
}

/** A tab that serves its caller, as the approval page shows it: its state, what to sign, by when. */
export interface TabOnPage {
  tab: TabView;
  sign: WalletSigningRequest;
  signBy: string;
  words: string;
  /** This service's URL (PUBLIC_URL): who asks. */
  service: string;
}

/**
 * What a Solana funding costs beside the tab (src/chains/svm-transfers.ts): the wallet pays its fee,
 * and lends the session's token account its rent (2,039,280 lamports) and the session key a system
 * account's rent plus its return's fee (895,880); the return gives back all but that fee.
 */
const SOLANA_COSTS =
  " Your wallet also pays two network fees of 0.000005 SOL and lends the tab's accounts about 0.003 SOL of rent, which returns when the tab closes.";

/** The funding in words, as the wallet's prompt and the approval page say it. */
export function fundingWords(publicUrl: string, amount: bigint, network: string, endsAt: Date): string {
  const solana = network.startsWith("solana:") ? SOLANA_COSTS : "";
  return `Open a tab of $${formatUsd(amount)} with ${publicUrl} on ${networkLabel(network)}: up to that much leaves your wallet now, the agent pays from it until ${utcClock(endsAt)}, and what is left returns to you.${solana}`;
}
