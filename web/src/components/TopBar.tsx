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
      <div className="brand">
        <span className="logo" aria-hidden="true">
          x402
        </span>
        <div>
          <h1>Payment agent</h1>
          <p className="muted small">Asks, quotes, pays within your limits, answers.</p>
        </div>
      </div>
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
