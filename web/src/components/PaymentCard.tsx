import { useEffect, useState } from "react";
import { isFinal } from "../../../src/protocol/status.js";
import type { PaymentStatus } from "../../../src/protocol/stream.js";
import type { ErrorPayload, PaymentUpdate } from "../chat/types.js";
import {
  explorerTxUrl,
  networkName,
  readable,
  STATUS_LABELS,
  shortHash,
  statusTone,
  usd,
} from "../format.js";
import { ApprovalBox } from "./ApprovalBox.js";
import { CopyButton } from "./ApprovalTerms.js";
import { BudgetMeter } from "./BudgetMeter.js";
import type { CardProps as Props } from "./card-types.js";
import { approvalExpired, useNow } from "./useNow.js";

export type { ApprovalState } from "./card-types.js";

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

/** The statuses this card has shown, in order (each `p:` replaces the part; the card remembers). */
function useHistory(status: PaymentStatus): PaymentStatus[] {
  const [history, setHistory] = useState<PaymentStatus[]>([status]);
  useEffect(() => {
    setHistory((h) => (h.includes(status) ? h : [...h, status]));
  }, [status]);
  return history;
}

/** The update's own message explains a refusal or failure; while it waits, the approval box speaks. */
function cardProblems(payment: PaymentUpdate, errors: ErrorPayload[]): string[] {
  const own =
    payment.message &&
    statusTone(payment.status) === "bad" &&
    !errors.some((e) => e.message === payment.message)
      ? [payment.message]
      : [];
  return [...own, ...errors.map((e) => e.message)];
}

/** Statuses of a payment that will not be made: its budget shows nothing "after this". */
const NOT_MADE: ReadonlySet<PaymentStatus> = new Set([
  "expired",
  "rejected",
  "released",
  "refused",
  "failed",
]);

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
  // The service's words with its network ids and times as this card says them.
  // Once lapsed, the ask to approve is over: the approval box says it expired instead.
  const current = lapsed ? errors.filter((e) => e.code !== "approval_required") : errors;
  const problems = cardProblems(payment, current).map((text) => readable(text, props.localNetworks));
  const note =
    payment.message && tone !== "bad" && !waiting
      ? readable(payment.message, props.localNetworks)
      : undefined;
  return (
    <article
      className={`card payment tone-${tone}`}
      data-testid="payment-card"
      data-status={payment.status}
      data-expired={lapsed ? "" : undefined}
      data-payment-id={payment.paymentId}
      // Focused when its Approve or Reject is pressed (the buttons then turn off): see ApprovalBox.
      tabIndex={-1}
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
      {history.length > 1 ? <PaymentSteps history={history} /> : null}
      {payment.budget ? (
        <BudgetMeter
          budget={payment.budget}
          final={lapsed || NOT_MADE.has(payment.status)}
          past={lapsed || isFinal(payment.status)}
        />
      ) : null}
      {payment.status === "awaiting_approval" ? <ApprovalBox {...props} /> : null}
      {payment.transaction ? (
        <TransactionLine transaction={payment.transaction} explorer={explorer} local={local} />
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

/** Earlier steps in the past tense, so a wait that is over reads as done ("Approval asked"). */
function PaymentSteps({ history }: { history: PaymentStatus[] }) {
  return (
    <ol className="steps" aria-label="Payment steps">
      {history.map((s, i) => (
        <li key={s} className={i === history.length - 1 ? "current" : ""}>
          {i === history.length - 1 ? STATUS_LABELS[s] : (PAST_LABELS[s] ?? STATUS_LABELS[s])}
        </li>
      ))}
    </ol>
  );
}

interface TransactionProps {
  transaction: string;
  /** Absent on a local network and on one without a known explorer: the hash is shown as code. */
  explorer: string | undefined;
  local: boolean;
}

function TransactionLine({ transaction, explorer, local }: TransactionProps) {
  return (
    <div className="tx" data-testid="tx">
      <span className="muted">Transaction </span>
      {explorer ? (
        <a href={explorer} target="_blank" rel="noreferrer noopener" title={transaction}>
          {shortHash(transaction, 10)}
        </a>
      ) : (
        <code title={transaction}>{shortHash(transaction, 10)}</code>
      )}
      <CopyButton text={transaction} label="the transaction hash" />
      {!explorer ? (
        <span className="muted"> ({local ? "local network" : "this network"}: no explorer)</span>
      ) : null}
    </div>
  );
}
