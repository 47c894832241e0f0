import { useState } from "react";
import type { PageTab } from "../chat/useTab.js";
import { localTime, networkName, usd } from "../format.js";

const DURATIONS = [
  ["15 minutes", 900],
  ["1 hour", 3600],
  ["8 hours", 28_800],
] as const;

interface TabBarProps {
  tab: PageTab | undefined;
  busy: boolean;
  error: string | undefined;
  localNetworks: ReadonlySet<string>;
  onOpen(amount: string, seconds: number): void;
  onClose(): void;
}

/**
 * Sign once, pay many (docs/payments.md#tabs): open a tab of $X for a while with one signature in
 * the wallet; while it is open its balance shows here, and payments on its network need no card;
 * closing it returns what is left.
 */
export function TabBar({ tab, busy, error, localNetworks, onOpen, onClose }: TabBarProps) {
  const [amount, setAmount] = useState("0.05");
  const [seconds, setSeconds] = useState(3600);
  const view = tab?.view;
  const live = view && (view.status === "open" || view.status === "closing" || view.status === "funding");
  return (
    <section className="tab-bar" data-testid="tab-bar" aria-label="Tab">
      {live && view ? (
        <>
          <p data-testid="tab-state">
            <strong>Tab {view.status === "open" ? "open" : view.status}</strong> · {usd(view.left.usd)} left
            of {usd(view.amount.usd)} on {networkName(view.network, localNetworks.has(view.network))} · until{" "}
            {localTime(view.endsAt)}. Payments on it need no signature.
          </p>
          <button type="button" disabled={busy || view.status !== "open"} onClick={onClose}>
            {busy ? "Closing…" : "Close tab"}
          </button>
        </>
      ) : (
        <>
          {view?.status === "closed" ? (
            <p data-testid="tab-state">
              <strong>Tab closed</strong> · {usd(view.spent.usd)} spent · {usd(view.refunded?.usd ?? "0")}{" "}
              returned to your wallet.
            </p>
          ) : (
            <p className="muted small">
              Sign once: your wallet funds a tab, the agent pays from it without asking, and what is left
              returns when you close it.
            </p>
          )}
          <form
            className="tab-form"
            onSubmit={(e) => {
              e.preventDefault();
              onOpen(amount, seconds);
            }}
          >
            <label>
              Tab of $
              <input
                value={amount}
                inputMode="decimal"
                size={6}
                aria-label="Tab amount in USD"
                onChange={(e) => setAmount(e.target.value)}
              />
            </label>
            <label>
              for{" "}
              <select
                value={seconds}
                aria-label="How long the tab stays open"
                onChange={(e) => setSeconds(Number(e.target.value))}
              >
                {DURATIONS.map(([label, s]) => (
                  <option key={s} value={s}>
                    {label}
                  </option>
                ))}
              </select>
            </label>
            <button type="submit" className="primary" disabled={busy}>
              {busy ? "Waiting for your wallet…" : "Open a tab"}
            </button>
          </form>
        </>
      )}
      {error ? (
        <p className="card-error" role="alert">
          {error}
        </p>
      ) : null}
    </section>
  );
}
