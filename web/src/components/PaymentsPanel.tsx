import { useState } from "react";
import type { PaymentHistoryItem } from "../../../src/client/index.js";
import { networkName, STATUS_LABELS, shortHash, statusTone, usd } from "../format.js";
import { usePaymentHistory } from "./usePaymentHistory.js";

interface Props {
  /** The bearer token: whose payments these are (none: nothing to list). */
  token: string | undefined;
  /** Networks of the embedded devnet (named local). */
  localNetworks: ReadonlySet<string>;
  onClose(): void;
}

const FILTERS = [
  ["", "All"],
  ["settled", "Paid"],
  ["awaiting_approval", "Waiting for approval"],
  ["failed,refused,rejected,expired,released", "Not paid"],
  ["unknown,submitted,signed,reserved", "In progress or unclear"],
] as const;

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}

function when(iso: string): string {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString();
}

/** The caller's payments (GET /api/payments): newest first, a page at a time, and a CSV export. */
export function PaymentsPanel({ token, localNetworks, onClose }: Props) {
  const [filter, setFilter] = useState("");
  const { items, more, loading, error, exportCsv } = usePaymentHistory(token, filter);
  return (
    <aside className="settings payments-panel" aria-label="Payments" data-testid="payments-panel">
      <div className="settings-head">
        <h2>Payments</h2>
        <button type="button" className="link" onClick={onClose}>
          Close
        </button>
      </div>
      {token ? null : (
        <p className="muted small" data-testid="payments-no-token">
          Payments are listed by bearer token: set yours in Settings to see what it paid. A wallet address
          alone shows nothing.
        </p>
      )}
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
    </aside>
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
