import { type KeyboardEvent, type Ref, useId, useState } from "react";
import { shortHash } from "../format.js";
import type { PageWallet, WalletOption } from "../wallet/types.js";
import { useMenuFocus } from "./useMenuFocus.js";

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
  const { trigger, popover, onKeyDown } = useMenuFocus(open, setOpen);
  const popoverId = useId();
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
      <WalletButton
        ref={trigger}
        wallet={wallet}
        open={open}
        popoverId={popoverId}
        onToggle={() => setOpen(!open)}
      />
      {open ? (
        <WalletPopover
          ref={popover}
          id={popoverId}
          options={options}
          wallet={wallet}
          busy={busy}
          error={error}
          onKeyDown={onKeyDown}
          onConnect={(option) => void connect(option)}
          onDisconnect={() => {
            onDisconnect();
            setOpen(false);
          }}
        />
      ) : null}
    </div>
  );
}

interface ButtonProps {
  ref: Ref<HTMLButtonElement>;
  wallet: PageWallet | undefined;
  open: boolean;
  popoverId: string;
  onToggle(): void;
}

/** Once connected, the button shows which wallet pays, and still opens the menu to switch or disconnect. */
function WalletButton({ ref, wallet, open, popoverId, onToggle }: ButtonProps) {
  const popup = {
    "aria-haspopup": "dialog",
    "aria-expanded": open,
    "aria-controls": open ? popoverId : undefined,
  } as const;
  if (!wallet)
    return (
      <button ref={ref} type="button" className="primary" {...popup} onClick={onToggle}>
        Connect wallet
      </button>
    );
  return (
    <button
      ref={ref}
      type="button"
      className="wallet-chip"
      {...popup}
      onClick={onToggle}
      data-testid="wallet-chip"
    >
      {wallet.icon ? <img src={wallet.icon} alt="" width={18} height={18} /> : null}
      <span>{wallet.name}</span>
      <code title={wallet.address}>{shortHash(wallet.address, 4)}</code>
    </button>
  );
}

interface PopoverProps {
  ref: Ref<HTMLDivElement>;
  id: string;
  options: WalletOption[];
  wallet: PageWallet | undefined;
  /** The option being connected: every option is off meanwhile. */
  busy: string | undefined;
  error: string | undefined;
  onKeyDown(event: KeyboardEvent<HTMLDivElement>): void;
  onConnect(option: WalletOption): void;
  onDisconnect(): void;
}

function WalletPopover({ ref, id, options, wallet, busy, error, onKeyDown, ...props }: PopoverProps) {
  return (
    <div
      ref={ref}
      id={id}
      className="wallet-popover"
      role="dialog"
      aria-label="Choose a wallet"
      onKeyDown={onKeyDown}
    >
      {options.length === 0 ? (
        <p className="muted">
          No wallet found in this browser. Install one that supports EIP-6963 (EVM) or the Wallet Standard
          (Solana).
        </p>
      ) : (
        <ul>
          {options.map((option) => (
            <li key={option.id}>
              <button type="button" disabled={busy !== undefined} onClick={() => props.onConnect(option)}>
                {option.icon ? <img src={option.icon} alt="" width={20} height={20} /> : null}
                <span className="wallet-name">{option.name}</span>
                <span className="wallet-note muted">
                  {option.chain === "evm" ? "EVM" : "Solana"} · {SOURCE_NOTE[option.source]}
                  {busy === option.id ? " · connecting…" : ""}
                </span>
              </button>
            </li>
          ))}
        </ul>
      )}
      {wallet ? (
        <button type="button" className="link" onClick={props.onDisconnect}>
          Disconnect {shortHash(wallet.address, 4)}
        </button>
      ) : null}
      {error ? (
        <p className="card-error" role="alert">
          {error}
        </p>
      ) : null}
    </div>
  );
}
