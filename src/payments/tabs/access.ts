import type { TabLookup, TabRecord } from "../ports/index.js";
import { sessionKey } from "./keys.js";
import type { TabsConfig, TabsDeps } from "./types.js";

/**
 * Whether a request may pay from `tab` now (the caller and wallet already checked): it is open and
 * not ended, and this instance's secret derives the key the tab recorded. What it holds beside its
 * committed payments is read here; the reservation decides (migration 13).
 */
export async function passFor(config: TabsConfig, deps: TabsDeps, tab: TabRecord): Promise<TabLookup> {
  const now = deps.now();
  if (tab.status !== "open" || tab.endsAt.getTime() <= now.getTime()) {
    return {
      ok: false,
      message: `The tab ${tab.tabId} is ${tab.status === "open" ? "ended" : tab.status}: nothing more is paid from it.`,
    };
  }
  const [usage, session] = await Promise.all([
    deps.store.usage(tab.tabId),
    sessionKey(config, tab.tabId, tab.network),
  ]);
  if (!session || session.address !== tab.session) {
    return {
      ok: false,
      message: `This instance's tab secret is not the one tab ${tab.tabId} was opened with.`,
    };
  }
  return {
    ok: true,
    pass: {
      tabId: tab.tabId,
      network: tab.network,
      asset: tab.asset,
      session: session.address,
      amount: tab.amount,
      left: tab.amount > usage.committed ? tab.amount - usage.committed : 0n,
      endsAt: tab.endsAt,
      signer: session.signer,
    },
  };
}
