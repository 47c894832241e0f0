import type { PageWallet, WalletOption } from "../wallet/types.js";
import { WalletMenu } from "./WalletMenu.js";

interface Props {
  showSettings: boolean;
  showPayments: boolean;
  onToggleSettings(): void;
  onTogglePayments(): void;
  options: WalletOption[];
  wallet: PageWallet | undefined;
  onConnect(option: WalletOption): Promise<void>;
  onDisconnect(): void;
}

/** The chat page's header: what it is, the side panels' buttons, and the wallet menu. */
export function TopBar({
  showSettings,
  showPayments,
  onToggleSettings,
  onTogglePayments,
  ...walletMenu
}: Props) {
  return (
    <header className="topbar">
      <Brand title="Payment agent" subtitle="Asks, quotes, pays within your limits, answers." />
      <div className="topbar-actions">
        <button type="button" className="ghost" aria-expanded={showSettings} onClick={onToggleSettings}>
          Settings
        </button>
        <button type="button" className="ghost" aria-expanded={showPayments} onClick={onTogglePayments}>
          Payments
        </button>
        <WalletMenu {...walletMenu} />
      </div>
    </header>
  );
}

/** The logo with a page's title and one line under it (the chat page and the approval page). */
export function Brand({ title, subtitle }: { title: string; subtitle: string }) {
  return (
    <div className="brand">
      <span className="logo" aria-hidden="true">
        x402
      </span>
      <div>
        <h1>{title}</h1>
        <p className="muted small">{subtitle}</p>
      </div>
    </div>
  );
}
