import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import { TabClient, type TabView } from "../../../src/client/index.js";
import type { PageWallet } from "../wallet/types.js";
import { loadTab, saveTab } from "./persist.js";
import { describeError } from "./transport.js";

/** The page's tab: which, its token (kept in this page's memory only), and what it holds. */
export interface PageTab {
  view: TabView;
  token: string;
}

/**
 * A tab for the connected wallet (docs/clients.md, "Tabs"): opened with one signature in the wallet,
 * its token sent with every chat request while it is open, read again after each answer, closed
 * on demand (what is left returns to the wallet). A tab is its wallet's: another wallet sees none.
 */
export function useTab(
  wallet: PageWallet | undefined,
  token: () => string | undefined,
  local: ReadonlySet<string>,
) {
  const [tab, setTab] = useState<PageTab | undefined>();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>();
  const tokenRef = useRef(token);
  tokenRef.current = token;
  const client = useMemo(() => new TabClient({ token: () => tokenRef.current() }), []);
  const mine =
    tab && wallet && tab.view.wallet.toLowerCase() === wallet.address.toLowerCase() ? tab : undefined;

  // A reload finds the tab again (its token kept in this browser tab's storage until it closes).
  useEffect(() => {
    const saved = loadTab();
    if (!saved) return;
    client.get(saved.tabId, saved.token).then(
      (view) => (view.status === "closed" ? saveTab(undefined) : setTab({ view, token: saved.token })),
      () => saveTab(undefined),
    );
  }, [client]);
  useEffect(() => {
    if (tab) saveTab(tab.view.status === "closed" ? undefined : { tabId: tab.view.tabId, token: tab.token });
  }, [tab]);

  const run = useCallback(async (work: () => Promise<void>) => {
    setBusy(true);
    setError(undefined);
    try {
      await work();
    } catch (e) {
      setError(describeError(e));
    } finally {
      setBusy(false);
    }
  }, []);

  const open = (amount: string, seconds: number) =>
    run(async () => {
      if (!wallet) return;
      const opened = await client.openWith({ walletAddress: wallet.address, amount, seconds }, (update) =>
        wallet.approve(update, { local: local.has(update.network ?? "") }),
      );
      setTab({ view: opened.tab, token: opened.token });
    });

  const close = () =>
    run(async () => {
      if (!mine) return;
      setTab({ ...mine, view: await client.close(mine.view.tabId, mine.token) });
    });

  const refresh = useCallback(async () => {
    if (!mine || mine.view.status === "closed") return;
    const view = await client.get(mine.view.tabId, mine.token).catch(() => undefined);
    if (view) setTab((t) => (t && t.view.tabId === view.tabId ? { ...t, view } : t));
  }, [client, mine]);

  /** The token the chat sends: only while the tab is open and the connected wallet is its own. */
  const payingToken = mine?.view.status === "open" ? mine.token : undefined;
  return { tab: mine, busy, error, open, close, refresh, payingToken };
}
