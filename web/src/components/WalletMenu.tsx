import { useState } from "react";
import { shortHash } from "../format.js";
import type { PageWallet, WalletOption } from "../wallet/types.js";

interface Props {
  options: WalletOption[];
  wallet: PageWallet | undefined;
  onConnect(option: WalletOption): Promise<void>;
  onDisconnect(): void;
}

const SOURCE_NOTE: Record<WalletOption["source"], string> = {
  eip6963: "browser wallet",
  injected: "window.ethereum",
  "wallet-standard": "Solana wallet",
  devnet: "test keys, simulated money",
};

/** Connect a wallet: those the browser announced, and the devnet's test wallets when it runs. */
export function WalletMenu({ options, wallet, onConnect, onDisconnect }: Props) {
  const [open, setOpen] = useState(false);
  const [busy, setBusy] = useState<string>();
  const [error, setError] = useState<string>();
  const connect = async (option: WalletOption) => {
    setBusy(option.id);
    setError(undefined);
    try {
      await onConnect(option);
      setOpen(false);
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
    } finally {
      setBusy(undefined);
    }
  };
  return (
    <div className="wallet-menu">
      {wallet ? (
        <button
          type="button"
          className="wallet-chip"
          onClick={() => setOpen(!open)}
          data-testid="wallet-chip"
        >
          {wallet.icon ? <img src={wallet.icon} alt="" width={18} height={18} /> : null}
          <span>{wallet.name}</span>
          <code title={wallet.address}>{shortHash(wallet.address, 4)}</code>
        </button>
      ) : (
        <button type="button" className="primary" onClick={() => setOpen(!open)}>
          Connect wallet
        </button>
      )}
      {open ? (
        <div className="wallet-popover" role="dialog" aria-label="Choose a wallet">
          {options.length === 0 ? (
            <p className="muted">
              No wallet found in this browser. Install one that supports EIP-6963 (EVM) or the Wallet Standard
              (Solana).
            </p>
          ) : (
            <ul>
              {options.map((option) => (
                <li key={option.id}>
                  <button type="button" disabled={busy !== undefined} onClick={() => void connect(option)}>
                    {option.icon ? <img src={option.icon} alt="" width={20} height={20} /> : null}
                    <span className="wallet-name">{option.name}</span>
                    <span className="muted">
                      {option.chain.toUpperCase()} · {SOURCE_NOTE[option.source]}
                    </span>
                    {busy === option.id ? <span className="muted">connecting…</span> : null}
                  </button>
                </li>
              ))}
            </ul>
          )}
          {wallet ? (
            <button
              type="button"
              className="link"
              onClick={() => {
                onDisconnect();
                setOpen(false);
              }}
            >
              Disconnect {shortHash(wallet.address, 4)}
            </button>
          ) : null}
          {error ? (
            <p className="card-error" role="alert">
              {error}
            </p>
          ) : null}
        </div>
      ) : null}
    </div>
  );
}
