import { type KeyboardEvent, useEffect, useId, useRef, useState } from "react";
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

const FOCUSABLE = "button:not([disabled]), [href], input, select, textarea, [tabindex]:not([tabindex='-1'])";

/**
 * While open: focus moves into the popover and stays there (Tab wraps), Escape or a click outside
 * closes it, and focus goes back to the button that opened it. The popover floats over the page
 * (position: absolute), so opening it moves nothing.
 */
function useMenuFocus(open: boolean, setOpen: (open: boolean) => void) {
  const trigger = useRef<HTMLButtonElement>(null);
  const popover = useRef<HTMLDivElement>(null);
  const wasOpen = useRef(false);
  useEffect(() => {
    if (open) {
      popover.current?.querySelector<HTMLElement>(FOCUSABLE)?.focus();
      const outside = (event: PointerEvent) => {
        const target = event.target as Node;
        if (!popover.current?.contains(target) && !trigger.current?.contains(target)) setOpen(false);
      };
      document.addEventListener("pointerdown", outside);
      wasOpen.current = true;
      return () => document.removeEventListener("pointerdown", outside);
    }
    if (wasOpen.current) trigger.current?.focus();
    wasOpen.current = false;
    return undefined;
  }, [open, setOpen]);
  const onKeyDown = (event: KeyboardEvent<HTMLDivElement>) => {
    if (event.key === "Escape") {
      event.preventDefault();
      setOpen(false);
      return;
    }
    if (event.key !== "Tab" || !popover.current) return;
    const items = [...popover.current.querySelectorAll<HTMLElement>(FOCUSABLE)];
    const first = items[0];
    const last = items.at(-1);
    if (!first || !last) return;
    if (event.shiftKey && document.activeElement === first) {
      event.preventDefault();
      last.focus();
    } else if (!event.shiftKey && document.activeElement === last) {
      event.preventDefault();
      first.focus();
    }
  };
  return { trigger, popover, onKeyDown };
}

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
      {wallet ? (
        <button
          ref={trigger}
          type="button"
          className="wallet-chip"
          aria-haspopup="dialog"
          aria-expanded={open}
          aria-controls={open ? popoverId : undefined}
          onClick={() => setOpen(!open)}
          data-testid="wallet-chip"
        >
          {wallet.icon ? <img src={wallet.icon} alt="" width={18} height={18} /> : null}
          <span>{wallet.name}</span>
          <code title={wallet.address}>{shortHash(wallet.address, 4)}</code>
        </button>
      ) : (
        <button
          ref={trigger}
          type="button"
          className="primary"
          aria-haspopup="dialog"
          aria-expanded={open}
          aria-controls={open ? popoverId : undefined}
          onClick={() => setOpen(!open)}
        >
          Connect wallet
        </button>
      )}
      {open ? (
        <div
          ref={popover}
          id={popoverId}
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
