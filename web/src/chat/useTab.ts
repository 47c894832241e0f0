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
  const [tabs, setTabs] = useState<Readonly<Record<string, PageTab>>>({});
  const loaded = useRef(false);
  /** Saved tabs the reload could not read (offline, say): kept, never forgotten for a blip. */
  const unread = useRef<{ tabId: string; token: string }[]>([]);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>();
  const tokenRef = useRef(token);
  tokenRef.current = token;
  const client = useMemo(() => new TabClient({ token: () => tokenRef.current() }), []);
  const mine = wallet ? tabs[wallet.address.toLowerCase()] : undefined;
  const put = useCallback((tab: PageTab) => {
    setTabs((all) => ({ ...all, [tab.view.wallet.toLowerCase()]: tab }));
  }, []);

  // A reload finds the tabs again (their tokens kept in this browser tab's storage until closed).
  useEffect(() => {
    const saved = loadTabs();
    const found = saved.map((s) =>
      client.get(s.tabId, s.token).then(
        (view) => (view.status === "closed" ? undefined : put({ view, token: s.token })),
        () => unread.current.push(s),
      ),
    );
    void Promise.allSettled(found).then(() => {
      loaded.current = true;
      setTabs((all) => ({ ...all })); // saves what was found
    });
  }, [client, put]);
  useEffect(() => {
    if (!loaded.current) return; // not before the saved ones are read back
    const open = Object.values(tabs).filter((t) => t.view.status !== "closed");
    saveTabs([...open.map((t) => ({ tabId: t.view.tabId, token: t.token })), ...unread.current]);
  }, [tabs]);

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

  const refresh = useCallback(async () => {
    if (!mine || mine.view.status === "closed") return;
    const view = await client.get(mine.view.tabId, mine.token).catch(() => undefined);
    if (view && view.tabId === mine.view.tabId) put({ ...mine, view });
  }, [client, mine, put]);

  /** The token the chat sends: only while the tab is open and the connected wallet is its own. */
  const payingToken = mine?.view.status === "open" ? mine.token : undefined;
  return { tab: mine, busy, error, open, close, refresh, payingToken };
}
