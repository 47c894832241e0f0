import { useEffect, useRef, useState } from "react";
import type { PaymentHistoryItem, WalletSession } from "../../../src/client/index.js";
import { hostOf, networkName, STATUS_LABELS, shortHash, statusTone, usd } from "../format.js";
import { SidePanel } from "./SidePanel.js";
import { usePaymentHistory } from "./usePaymentHistory.js";

/** The connected wallet's sign-in (wallet/useWalletSession.ts), offered when no token is set. */
export interface WalletSignInState {
  session: WalletSession | undefined;
  /** Absent: no wallet connected, or one that cannot sign a message. */
  signIn: (() => Promise<void>) | undefined;
  /** Present while signed in: ends the session on the service. */
  signOut?: (() => Promise<void>) | undefined;
  busy: boolean;
  error: string | undefined;
}

interface Props {
  /** The bearer token: whose payments these are (none: a signed-in wallet's, else nothing to list). */
  token: string | undefined;
  wallet: WalletSignInState;
  /** Networks of the embedded devnet (named local). */
  localNetworks: ReadonlySet<string>;
  onClose(): void;
}

const FILTERS = [
  ["", "All"],
  ["settled", "Paid"],
  ["awaiting_approval", "Waiting for approval"],
  ["failed,rejected,expired,released", "Not paid"],
  ["unknown,submitted,signed,reserved", "In progress or unclear"],
] as const;

function when(iso: string): string {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString();
}

/** The caller's payments (GET /api/payments): newest first, a page at a time, and a CSV export. */
export function PaymentsPanel({ token: bearer, wallet, localNetworks, onClose }: Props) {
  const [filter, setFilter] = useState("");
  // A token set in Settings wins; without one, a wallet that signed in reads what it paid.
  const token = bearer ?? wallet.session?.token;
  const { items, more, loading, error, exportCsv } = usePaymentHistory(token, filter);
  return (
    <SidePanel title="Payments" className="settings payments-panel" onClose={onClose} testId="payments-panel">
      {bearer ? null : <WalletSignIn wallet={wallet} />}
      <div className="payments-tools">
        <label className="field">
          <span>Show</span>
          <select name="paymentsFilter" value={filter} onChange={(e) => setFilter(e.target.value)}>
            {FILTERS.map(([value, label]) => (
              <option key={label} value={value}>
                {label}
              </option>
            ))}
          </select>
        </label>
        <button type="button" className="ghost" onClick={() => void exportCsv()} disabled={!token}>
          Download CSV
        </button>
      </div>
      {error ? (
        <p className="card-error" role="alert">
          {error}
        </p>
      ) : null}
      {items.length === 0 && !loading && !error ? <p className="muted">No payments to show.</p> : null}
      <ul className="payments-list">
        {items.map((p) => (
          <PaymentRow key={p.paymentId} payment={p} local={localNetworks.has(p.network)} />
        ))}
      </ul>
      {more ? (
        <button type="button" className="ghost" disabled={loading} onClick={more}>
          More
        </button>
      ) : null}
      {loading ? <p className="muted small">Loading…</p> : null}
    </SidePanel>
  );
}

/** Without a token: the signed-in wallet, or the way to sign in, or what to do without a wallet. */
function WalletSignIn({ wallet }: { wallet: WalletSignInState }) {
  const box = useRef<HTMLDivElement>(null);
  // Signing in or out replaces the button pressed: once it is done, focus goes to the one shown
  // now (Sign out, or Sign in again), not to the page's top.
  const pressed = useRef(false);
  const signedIn = wallet.session !== undefined;
  // biome-ignore lint/correctness/useExhaustiveDependencies: the block shown changes with signedIn.
  useEffect(() => {
    if (!pressed.current || wallet.busy) return;
    pressed.current = false;
    (box.current?.querySelector<HTMLElement>("button:not([disabled])") ?? box.current)?.focus();
  }, [signedIn, wallet.busy]);
  const press = (action: (() => Promise<unknown>) | undefined) => {
    pressed.current = true;
    void action?.();
  };
  if (wallet.session)
    return (
      <div data-testid="payments-wallet-session" ref={box} tabIndex={-1}>
        <p className="muted small">
          The payments made from <code title={wallet.session.wallet}>{shortHash(wallet.session.wallet)}</code>
          , signed in with your wallet.
        </p>
        {wallet.signOut ? (
          <button type="button" disabled={wallet.busy} onClick={() => press(wallet.signOut)}>
            Sign out
          </button>
        ) : null}
      </div>
    );
  return (
    <div data-testid="payments-no-token" ref={box} tabIndex={-1}>
      <p className="muted small">
        Payments are listed by bearer token (set yours in Settings), or for your wallet once it signs in: it
        signs a message that proves it is yours, and pays nothing. A wallet address alone shows nothing.
      </p>
      {wallet.signIn ? (
        <button type="button" disabled={wallet.busy} onClick={() => press(wallet.signIn)}>
          {wallet.busy ? "Signing in…" : "Sign in with your wallet"}
        </button>
      ) : null}
      {wallet.error ? (
        <p className="card-error" role="alert">
          {wallet.error}
        </p>
      ) : null}
    </div>
  );
}

/**
 * One payment of the list: the service by its name when its approval recorded one, its host under
 * it (else the host alone). Its explorer URL comes from the service: linked only when it is https.
 */
function PaymentRow({ payment: p, local }: { payment: PaymentHistoryItem; local: boolean }) {
  const explorer = p.explorerUrl?.startsWith("https://") ? p.explorerUrl : undefined;
  return (
    <li className="payment-row" data-testid="payment-row" data-status={p.status}>
      <div className="payment-row-head">
        <strong>{usd(p.amount.usd)}</strong>
        <span className={`status status-${statusTone(p.status)}`}>{STATUS_LABELS[p.status]}</span>
      </div>
      <div className="small">
        <span className="payment-row-service" data-testid="payment-service">
          {p.serviceName ?? hostOf(p.service)}
        </span>{" "}
        · {networkName(p.network, local)}
      </div>
      {p.serviceName ? (
        <div className="small muted" data-testid="payment-origin">
          {hostOf(p.service)}
        </div>
      ) : null}
      <div className="small">
        to <code title={p.payTo}>{shortHash(p.payTo)}</code> · {when(p.createdAt)}
      </div>
      {p.transaction ? (
        <div className="small">
          {explorer ? (
            <a href={explorer} target="_blank" rel="noreferrer noopener">
              {shortHash(p.transaction, 8)}
            </a>
          ) : (
            <code title={p.transaction}>{shortHash(p.transaction, 8)}</code>
          )}
          {explorer ? null : <span className="muted"> (no explorer)</span>}
        </div>
      ) : null}
    </li>
  );
}
