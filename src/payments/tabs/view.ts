import { formatUsd } from "../../money/index.js";
import type { TabView } from "../../protocol/index.js";
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
    ...(tab.refunded !== null ? { refunded: money(tab.refunded) } : {}),
    ...(tab.error ? { error: tab.error } : {}),
  };
}
