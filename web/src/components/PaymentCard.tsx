import { useEffect, useState } from "react";
import { describeApproval } from "../../../src/client/index.js";
import type { PaymentStatus } from "../../../src/protocol/stream.js";
import type { ErrorPayload, PaymentUpdate } from "../chat/types.js";
import { explorerTxUrl, networkName, STATUS_LABELS, shortHash, statusTone, usd } from "../format.js";
import type { PageWallet } from "../wallet/types.js";
import { BudgetMeter } from "./BudgetMeter.js";
import { approvalExpired, useNow } from "./useNow.js";

/** What the page is doing about this card's approval: signing in the wallet, sending, or what went wrong. */
export interface ApprovalState {
  phase: "signing" | "sending" | "idle";
  error?: string;
}

interface Props {
  payment: PaymentUpdate;
  /** `e:` lines that name this payment. */
  errors: ErrorPayload[];
  wallet: PageWallet | undefined;
  approval: ApprovalState | undefined;
  /** False while another turn streams: one request at a time. */
  canAct: boolean;
  /**
   * The card is in an earlier answer than the last: its approval would resume the turn in the last
   * answer, not here, so it is not offered (the chat moved on; the payment lapses unpaid).
   */
  superseded: boolean;
  /** Networks of the embedded devnet (no explorer has their transactions). */
  localNetworks: ReadonlySet<string>;
  onApprove(payment: PaymentUpdate): void;
  onReject(payment: PaymentUpdate): void;
}

/** A service without a name: its host and path ("api.example.com/weather"), no query. */
function serviceLabel(url: string): string {
  try {
    const u = new URL(url);
    return `${u.host}${u.pathname === "/" ? "" : u.pathname}`;
  } catch {
    return url;
  }
}

function countdown(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}

/** The statuses this card has shown, in order (each `p:` replaces the part; the card remembers). */
function useHistory(status: PaymentStatus): PaymentStatus[] {
  const [history, setHistory] = useState<PaymentStatus[]>([status]);
  useEffect(() => {
    setHistory((h) => (h.includes(status) ? h : [...h, status]));
  }, [status]);
  return history;
}

function ApprovalBox({
  payment,
  wallet,
  approval,
  canAct,
  superseded,
  onApprove,
  onReject,
}: Omit<Props, "errors">) {
  const request = payment.approval;
  const expiresAt = request ? Date.parse(request.expiresAt) : Number.NaN;
  const now = useNow(true);
  if (!request) return null;
  const left = expiresAt - now;
  const expired = approvalExpired(request.expiresAt, now);
  const sameWallet = wallet?.address.toLowerCase() === request.wallet.toLowerCase();
  // What would be signed must be what the card shows (amount, payee, wallet); otherwise no signing.
  const { mismatches } = describeApproval(payment);
  const busy = approval?.phase === "signing" || approval?.phase === "sending";
  const what =
    request.sign.kind === "evm-typed-data"
      ? "an EIP-712 transfer authorization (eth_signTypedData_v4)"
      : "a Solana transfer transaction";
  return (
    <div className="approval" data-testid="approval">
      <p className="approval-text">
        Approve paying <strong>{usd(payment.amount?.usd)}</strong> to{" "}
        <code title={payment.payTo}>{shortHash(payment.payTo ?? "")}</code> from{" "}
        <code title={request.wallet}>{shortHash(request.wallet)}</code>? Your wallet signs {what}.
      </p>
      {!sameWallet ? (
        <p className="approval-warning" role="alert">
          {wallet
            ? `The connected wallet is ${shortHash(wallet.address)}; connect ${shortHash(request.wallet)} to approve.`
            : `Connect wallet ${shortHash(request.wallet)} to approve.`}
        </p>
      ) : null}
      {mismatches.length > 0 ? (
        <p className="card-error" role="alert">
          Not signing: the authorization does not match this card ({mismatches.join("; ")}).
        </p>
      ) : null}
      <div className="approval-actions">
        <button
          type="button"
          className="primary"
          disabled={!canAct || superseded || busy || expired || !sameWallet || mismatches.length > 0}
          onClick={() => onApprove(payment)}
        >
          {approval?.phase === "signing"
            ? "Sign in your wallet…"
            : approval?.phase === "sending"
              ? "Sending…"
              : `Approve ${usd(payment.amount?.usd)}`}
        </button>
        <button
          type="button"
          disabled={!canAct || superseded || busy || expired}
          onClick={() => onReject(payment)}
        >
          Reject
        </button>
        <span className="approval-expiry">
          {expired ? "Expired" : Number.isFinite(left) ? `Expires in ${countdown(left)}` : ""}
        </span>
      </div>
      {superseded && !expired ? (
        <p className="approval-warning" data-testid="approval-superseded">
          The chat has moved on since this was asked: nothing will be paid. Ask again to get it.
        </p>
      ) : null}
      {expired ? (
        <p className="approval-warning" data-testid="approval-expired">
          The time to approve has passed: nothing was signed or paid. Ask again for a new quote.
        </p>
      ) : null}
      {approval?.error ? (
        <p className="card-error" role="alert">
          {approval.error}
        </p>
      ) : null}
      <details className="approval-details">
        <summary>What will be signed</summary>
        <pre>
          {request.sign.kind === "evm-typed-data"
            ? JSON.stringify(request.sign.typedData.message, null, 2)
            : `${request.sign.transaction.slice(0, 120)}…`}
        </pre>
      </details>
    </div>
  );
}

/** One payment, following its `p:` updates: cost, budget, status, approval, transaction. */
export function PaymentCard(props: Props) {
  const { payment, errors } = props;
  const waiting = payment.status === "awaiting_approval";
  // A wait past its expiry is over (the service refuses a late signature): the card says so.
  const lapsed = approvalExpired(payment.approval?.expiresAt, useNow(waiting)) && waiting;
  const shown: PaymentStatus = lapsed ? "expired" : payment.status;
  const history = useHistory(shown);
  const tone = statusTone(shown);
  const service = payment.service.name ?? serviceLabel(payment.service.url);
  const local = payment.network !== undefined && props.localNetworks.has(payment.network);
  const explorer =
    payment.transaction && !local ? explorerTxUrl(payment.network, payment.transaction) : undefined;
  // The update's own message explains a refusal or failure; while it waits, the approval box speaks.
  const problems = [
    ...(payment.message &&
    statusTone(payment.status) === "bad" &&
    !errors.some((e) => e.message === payment.message)
      ? [payment.message]
      : []),
    ...errors.map((e) => e.message),
  ];
  const note = payment.message && tone !== "bad" && !waiting ? payment.message : undefined;
  return (
    <article
      className={`card payment tone-${tone}`}
      data-testid="payment-card"
      data-status={payment.status}
      data-expired={lapsed ? "" : undefined}
      data-payment-id={payment.paymentId}
    >
      <header className="card-head">
        <div>
          <div className="card-title">{service}</div>
          <div className="card-sub" title={payment.service.url}>
            {networkName(payment.network, local)}
            {payment.network ? <span className="muted"> · {payment.network}</span> : null}
          </div>
        </div>
        <div className="card-amount">
          <div className="amount" data-testid="amount">
            {usd(payment.amount?.usd)}
          </div>
          <span className={`status status-${tone}`} data-testid="status">
            {STATUS_LABELS[shown]}
          </span>
        </div>
      </header>
      {history.length > 1 ? (
        <ol className="steps" aria-label="Payment steps">
          {history.map((s, i) => (
            <li key={s} className={i === history.length - 1 ? "current" : ""}>
              {STATUS_LABELS[s]}
            </li>
          ))}
        </ol>
      ) : null}
      {payment.budget ? <BudgetMeter budget={payment.budget} /> : null}
      {payment.status === "awaiting_approval" ? <ApprovalBox {...props} /> : null}
      {payment.transaction ? (
        <div className="tx" data-testid="tx">
          <span className="muted">Transaction </span>
          {explorer ? (
            <a href={explorer} target="_blank" rel="noreferrer noopener" title={payment.transaction}>
              {shortHash(payment.transaction, 10)}
            </a>
          ) : (
            <code title={payment.transaction}>{shortHash(payment.transaction, 10)}</code>
          )}
          <button
            type="button"
            className="link"
            onClick={() => void navigator.clipboard?.writeText(payment.transaction ?? "")}
          >
            copy
          </button>
          {!explorer ? (
            <span className="muted"> ({local ? "local network" : "this network"}: no explorer)</span>
          ) : null}
        </div>
      ) : null}
      {note ? <p className="card-note muted">{note}</p> : null}
      {problems.length > 0 ? (
        <div className="card-error" role="alert" data-testid="card-error">
          {problems.map((text) => (
            <p key={text}>{text}</p>
          ))}
        </div>
      ) : null}
    </article>
  );
}
