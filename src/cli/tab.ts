import { type OpenedTab, TabClient } from "../client/index.js";
import { utcClock } from "../protocol/clock.js";
import { networkLabel } from "../protocol/networks.js";
import type { CliOptions } from "./args.js";
import { type LocalKey, signWith } from "./keys.js";
import type { Display } from "./session.js";

/**
 * `--tab USD` (docs/clients.md, "Terminal chat"): at the start the key file signs one funding for a
 * tab, after the person saw it in words (unless `--yes`); every turn then sends the tab's token, so
 * payments on its network are paid from it without asking; at the end the tab is closed and what it
 * did not spend returns to the wallet.
 */
export interface CliTab {
  token: string;
  close(): Promise<void>;
}

export async function openCliTab(
  options: CliOptions,
  key: LocalKey,
  display: Display,
  ask: ((question: string) => Promise<string | undefined>) | undefined,
): Promise<CliTab | undefined> {
  const tabs = new TabClient({ baseUrl: options.url, ...(options.token ? { token: options.token } : {}) });
  const body = { walletAddress: key.address, amount: options.tab ?? "0" };
  let opened: OpenedTab;
  try {
    opened = await tabs.openWith(body, async (update) => {
      display.note(update.message ?? `Open a tab of $${update.amount?.usd}.`);
      if (!options.yes) {
        const said = await ask?.("Sign it with the key file? [y/N] ");
        if (!/^y(es)?$/i.test(said?.trim() ?? "")) return { paymentId: update.paymentId, reject: true };
      }
      return signWith(key, update);
    });
  } catch (error) {
    display.alert(`No tab: ${error instanceof Error ? error.message : String(error)}`);
    return undefined;
  }
  const { tab, token } = opened;
  if (tab.status !== "open") {
    display.alert(
      `The tab ${tab.tabId} is ${tab.status}${tab.error ? `: ${tab.error}` : ""}; nothing is paid from it.`,
    );
    return undefined;
  }
  const until = utcClock(tab.endsAt);
  display.note(
    `Tab ${tab.tabId} open: $${tab.amount.usd} on ${networkLabel(tab.network)} until ${until}; its payments need no signature.`,
  );
  return {
    token,
    async close() {
      try {
        const closed = await tabs.close(tab.tabId, token);
        const back = closed.refunded
          ? `$${closed.refunded.usd} returned to your wallet`
          : "what is left returns once its payments are final";
        display.note(`Tab ${tab.tabId} ${closed.status}: $${closed.spent.usd} spent, ${back}.`);
      } catch (error) {
        display.alert(
          `The tab ${tab.tabId} could not be closed now (${error instanceof Error ? error.message : String(error)}); it closes on its own at ${until}.`,
        );
      }
    },
  };
}
