import { hostOf, networkName, STATUS_LABELS, shortHash, statusTone, usd } from "../format.js";
import type { OperatorPayment, Refusal } from "./api.js";
import { age, when } from "./model.js";
import type { OperatorData, SectionErrors } from "./useOperatorData.js";

interface Props {
  data: OperatorData;
  errors: SectionErrors;
  now: number;
  /** The embedded devnet's networks, named local as the chat page names them. */
  localNetworks: ReadonlySet<string>;
}

/** Unclear payments (with their age), recent payments and refusals, as the service last answered. */
export function ActivityTables({ data, errors, now, localNetworks }: Props) {
  return (
    <>
      <section className="operator-card" aria-labelledby="unclear-heading">
        <h2 id="unclear-heading">Unclear payments</h2>
        <p className="muted small">
          Sent or signed, outcome not known yet: the reconciler checks them on chain until each settles or
          fails.
        </p>
        <SectionError error={errors.unclear} />
        <PaymentsTable
          caption="Payments being reconciled, oldest first"
          testId="unclear-table"
          payments={data.unclear && [...data.unclear].sort((a, b) => a.createdAt.localeCompare(b.createdAt))}
          now={now}
          localNetworks={localNetworks}
          showAge
        />
      </section>
      <section className="operator-card" aria-labelledby="payments-heading">
        <h2 id="payments-heading">Recent payments</h2>
        <SectionError error={errors.payments} />
        <PaymentsTable
          caption="The last 50 payments, newest first"
          testId="payments-table"
          payments={data.payments}
          now={now}
          localNetworks={localNetworks}
        />
      </section>
      <section className="operator-card" aria-labelledby="refusals-heading">
        <h2 id="refusals-heading">Refusals</h2>
        <SectionError error={errors.refusals} />
        <RefusalsTable refusals={data.refusals} />
      </section>
    </>
  );
}

function SectionError({ error }: { error: string | undefined }) {
  return error ? (
    <p className="card-error" role="alert">
      {error}
    </p>
  ) : null;
}

function statusLabel(status: string): { label: string; tone: string } {
  return status in STATUS_LABELS
    ? {
        label: STATUS_LABELS[status as keyof typeof STATUS_LABELS],
        tone: statusTone(status as keyof typeof STATUS_LABELS),
      }
    : { label: status, tone: "neutral" };
}

function EmptyRow({ columns, text }: { columns: number; text: string }) {
  return (
    <tr>
      <td colSpan={columns} className="muted">
        {text}
      </td>
    </tr>
  );
}

interface TableProps {
  caption: string;
  testId: string;
  payments: OperatorPayment[] | undefined;
  now: number;
  localNetworks: ReadonlySet<string>;
  showAge?: boolean;
}

function PaymentsTable({ caption, testId, payments, now, localNetworks, showAge = false }: TableProps) {
  return (
    <div className="table-wrap">
      <table className="op-table" data-testid={testId}>
        <caption>{caption}</caption>
        <thead>
          <tr>
            <th scope="col">{showAge ? "Age" : "When"}</th>
            <th scope="col" className="num">
              Amount
            </th>
            <th scope="col">Status</th>
            <th scope="col">Service</th>
            <th scope="col">Caller</th>
            <th scope="col">Wallet</th>
            <th scope="col">Network</th>
            <th scope="col">Transaction</th>
          </tr>
        </thead>
        <tbody>
          {payments?.length === 0 ? <EmptyRow columns={8} text="None." /> : null}
          {payments?.map((p) => {
            const { label, tone } = statusLabel(p.status);
            return (
              <tr key={p.paymentId} data-testid="operator-payment" data-status={p.status}>
                <td title={p.createdAt}>{showAge ? age(p.createdAt, now) : when(p.createdAt)}</td>
                <td className="num">{usd(p.amountUsd)}</td>
                <td>
                  <span className={`status status-${tone}`}>{label}</span>
                </td>
                <td title={p.service}>{hostOf(p.service)}</td>
                <td>{p.caller ?? <span className="muted">none</span>}</td>
                <td>
                  <code title={p.wallet}>{shortHash(p.wallet)}</code>
                </td>
                <td>{networkName(p.network, localNetworks.has(p.network))}</td>
                <td>{p.txHash ? <code title={p.txHash}>{shortHash(p.txHash, 8)}</code> : null}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

/** Refusals carry no id: each is named by its time and caller, and which of that pair it is. */
function withKeys(refusals: Refusal[]): Array<[string, Refusal]> {
  const seen = new Map<string, number>();
  return refusals.map((r) => {
    const base = `${r.at} ${r.caller ?? ""}`;
    const n = (seen.get(base) ?? 0) + 1;
    seen.set(base, n);
    return [`${base} ${n}`, r];
  });
}

function RefusalsTable({ refusals }: { refusals: Refusal[] | undefined }) {
  return (
    <div className="table-wrap">
      <table className="op-table" data-testid="refusals-table">
        <caption>The last 50 refusals, newest first, from the audit trail</caption>
        <thead>
          <tr>
            <th scope="col">When</th>
            <th scope="col">Reason</th>
            <th scope="col">What the caller was told</th>
            <th scope="col">Caller</th>
            <th scope="col">Service</th>
            <th scope="col" className="num">
              Amount
            </th>
          </tr>
        </thead>
        <tbody>
          {refusals?.length === 0 ? <EmptyRow columns={6} text="None." /> : null}
          {withKeys(refusals ?? []).map(([key, r]) => (
            <tr key={key} data-testid="operator-refusal">
              <td>{when(r.at)}</td>
              <td>
                <code>{r.reason}</code>
              </td>
              <td>{r.message}</td>
              <td>{r.caller ?? <span className="muted">none</span>}</td>
              <td title={r.service ?? undefined}>{r.service ? hostOf(r.service) : ""}</td>
              <td className="num">{r.amountUsd === null ? "" : usd(r.amountUsd)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
