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

/** A step that is over, in the past tense (a wait for approval is no longer waiting). */
const PAST_LABELS: Partial<Record<PaymentStatus, string>> = { awaiting_approval: "Approval asked" };

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

/** The token's name: the EIP-712 domain's (the token contract's own), else the USD stablecoin it must be. */
function tokenName(payment: PaymentUpdate): string {
  const sign = payment.approval?.sign;
  const name = sign?.kind === "evm-typed-data" ? sign.typedData.domain.name : undefined;
  return typeof name === "string" && /^[\w .-]{1,32}$/.test(name) ? name : "USDC";
}

/** A service's host ("api.example.com"), or the URL as given when it is not one. */
function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}

/** What the request's and the day's budgets keep after this payment, in words. */
function budgetAfter(payment: PaymentUpdate): string | undefined {
  const b = payment.budget;
  if (!b) return undefined;
  const parts = [
    b.perRequest.remainingAfter
      ? `${usd(b.perRequest.remainingAfter.usd)} of ${usd(b.perRequest.limit.usd)} this request`
      : "",
    b.daily.remainingAfter ? `${usd(b.daily.remainingAfter.usd)} of ${usd(b.daily.limit.usd)} in 24 h` : "",
  ].filter(Boolean);
  return parts.length > 0 ? `${parts.join(", ")} left` : undefined;
}

function CopyButton({ text, label }: { text: string; label: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <button
      type="button"
      className="link"
      aria-label={`Copy ${label}`}
      onClick={() =>
        void navigator.clipboard?.writeText(text).then(
          () => setCopied(true),
          () => setCopied(false),
        )
      }
    >
      {copied ? "copied" : "copy"}
    </button>
  );
}

function ApprovalBox({
  payment,
  wallet,
  approval,
  canAct,
  superseded,
  localNetworks,
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
  const local = payment.network !== undefined && localNetworks.has(payment.network);
  const after = budgetAfter(payment);
  const what =
    request.sign.kind === "evm-typed-data"
      ? "an EIP-712 transfer authorization (eth_signTypedData_v4)"
      : "a Solana transfer transaction";
  return (
    <div className="approval" data-testid="approval">
      <p className="approval-text">Your wallet is asked to sign this payment:</p>
      <dl className="approval-terms">
        <dt>Amount</dt>
        <dd data-testid="approval-amount">
          <strong>{usd(payment.amount?.usd)}</strong> in {tokenName(payment)}
        </dd>
        <dt>To</dt>
        <dd>
          <code className="address" data-testid="approval-payee">
            {payment.payTo}
          </code>{" "}
          <CopyButton text={payment.payTo ?? ""} label="the payee's address" />
        </dd>
        <dt>For</dt>
        <dd data-testid="approval-service">{hostOf(payment.service.url)}</dd>
        <dt>Network</dt>
        <dd data-testid="approval-network">{networkName(payment.network, local)}</dd>
        <dt>From</dt>
        <dd>
          <code className="address">{request.wallet}</code>
        </dd>
        {after ? (
          <>
            <dt>Budget after</dt>
            <dd data-testid="approval-budget">{after}</dd>
          </>
        ) : null}
        <dt>Expires</dt>
        <dd data-testid="approval-countdown">
          {expired ? "Expired" : Number.isFinite(left) ? `in ${countdown(left)}` : ""}
        </dd>
      </dl>
      <p className="muted small">Your wallet signs {what}; nothing moves before you approve.</p>
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
      <details className="approval-details" data-testid="approval-details">
        <summary>Details: the raw data your wallet signs</summary>
        <pre>
          {request.sign.kind === "evm-typed-data"
            ? JSON.stringify(request.sign.typedData, null, 2)
            : request.sign.transaction}
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
              {i === history.length - 1 ? STATUS_LABELS[s] : (PAST_LABELS[s] ?? STATUS_LABELS[s])}
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
