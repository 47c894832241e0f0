import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import { TabClient, type TabView } from "../../../src/client/index.js";
import type { PageWallet } from "../wallet/types.js";
import { loadTabs, saveTabs } from "./persist.js";
import { describeError } from "./transport.js";

/** The page's tab: which, its token (kept in this page's memory only), and what it holds. */
export interface PageTab {
  view: TabView;
  token: string;
}

/**
 * A tab for the connected wallet (docs/clients.md, "Tabs"): opened with one signature in the wallet,
 * its token sent with every chat request while it is open, read again after each answer, closed
 * on demand (what is left returns to the wallet). A tab is its wallet's: another wallet sees none,
 * and each wallet of the page keeps its own (switching wallets loses no open tab, h52).
 */
export function useTab(
  wallet: PageWallet | undefined,
  token: () => string | undefined,
  local: ReadonlySet<string>,
) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>();
  const tokenRef = useRef(token);
  tokenRef.current = token;
  const client = useMemo(() => new TabClient({ token: () => tokenRef.current() }), []);
  const { tabs, put, update } = useSavedTabs(client);
  const mine = wallet ? tabs[wallet.address.toLowerCase()] : undefined;

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
      put({ view: opened.tab, token: opened.token });
    });

  const close = () =>
    run(async () => {
      if (!mine) return;
      put({ ...mine, view: await client.close(mine.view.tabId, mine.token) });
    });

  // Keyed on the shown tab's id, token and whether it is closed, never on its view: a new view
  // made a new `refresh`, which the page's effect ran again, without end (h54: 100 reads a second).
  const shownId = mine?.view.tabId;
  const shownToken = mine?.token;
  const shownClosed = mine?.view.status === "closed";
  const refresh = useCallback(async () => {
    if (!shownId || !shownToken || shownClosed) return;
    const view = await client.get(shownId, shownToken).catch(() => undefined);
    if (view) update(view);
  }, [client, shownId, shownToken, shownClosed, update]);

  /** The token the chat sends: only while the tab is open and the connected wallet is its own. */
  const payingToken = mine?.view.status === "open" ? mine.token : undefined;
  return { tab: mine, busy, error, open, close, refresh, payingToken };
}

type SavedTab = { tabId: string; token: string };

/**
 * The page's tabs, one shown per wallet, kept in this browser tab's storage until closed: a reload
 * finds them again. Saved tabs not shown are kept aside, never forgotten (h54): those a reload could
 * not read (offline, say), and an older open one of a wallet that has a newer; each reload reads
 * them again.
 */
function useSavedTabs(client: TabClient) {
  const [tabs, setTabs] = useState<Readonly<Record<string, PageTab>>>({});
  const shown = useRef(tabs);
  shown.current = tabs;
  const aside = useRef<SavedTab[]>([]);
  const loaded = useRef(false);
  const put = useCallback((tab: PageTab) => {
    const key = tab.view.wallet.toLowerCase();
    const before = shown.current[key];
    if (before && before.view.tabId !== tab.view.tabId && before.view.status !== "closed")
      aside.current.push({ tabId: before.view.tabId, token: before.token });
    aside.current = aside.current.filter((t) => t.tabId !== tab.view.tabId);
    shown.current = { ...shown.current, [key]: tab };
    setTabs(shown.current);
  }, []);
  /** A tab read again: its view, only while it is still the one shown for its wallet. */
  const update = useCallback((view: PageTab["view"]) => {
    setTabs((all) => {
      const key = view.wallet.toLowerCase();
      const current = all[key];
      return current && current.view.tabId === view.tabId ? { ...all, [key]: { ...current, view } } : all;
    });
  }, []);

  useEffect(() => {
    // Oldest first (as saved), so the newest open one of a wallet is shown, the others kept aside.
    const found = loadTabs().map((saved) =>
      client.get(saved.tabId, saved.token).then(
        (view) => ({ saved, view }),
        () => ({ saved, view: undefined }),
      ),
    );
    void Promise.all(found).then((all) => {
      for (const { saved, view } of all) {
        if (!view) aside.current.push(saved);
        else if (view.status !== "closed") put({ view, token: saved.token });
      }
      loaded.current = true;
      setTabs((current) => ({ ...current })); // saves what was found
    });
  }, [client, put]);
  useEffect(() => {
    if (!loaded.current) return; // not before the saved ones are read back
    const open = Object.values(tabs).filter((t) => t.view.status !== "closed");
    saveTabs([...aside.current, ...open.map((t) => ({ tabId: t.view.tabId, token: t.token }))]);
  }, [tabs]);
  return { tabs, put, update };
}
