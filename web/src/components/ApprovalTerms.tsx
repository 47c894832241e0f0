import { useState } from "react";
import type { ApprovalRequest, PaymentUpdate } from "../chat/types.js";
import { hostOf, networkName, usd } from "../format.js";

/**
 * The terms of a payment awaiting approval, each in words a person checks before signing: the
 * amount and token, the payee (copyable, to compare with what the wallet shows), the service, the
 * network, the paying wallet, the budget left after it, and the time left to decide.
 */

interface Props {
  payment: PaymentUpdate;
  request: ApprovalRequest;
  local: boolean;
  expired: boolean;
  /** Milliseconds until the approval expires (NaN when its time is not known). */
  left: number;
}

function countdown(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}

/** The token's name: the EIP-712 domain's (the token contract's own), else the USD stablecoin it must be. */
function tokenName(payment: PaymentUpdate): string {
  const sign = payment.approval?.sign;
  const name = sign?.kind === "evm-typed-data" ? sign.typedData.domain.name : undefined;
  return typeof name === "string" && /^[\w .-]{1,32}$/.test(name) ? name : "USDC";
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

/** A small "copy" button named for what it copies ("Copy the payee's address"); says when it has. */
export function CopyButton({ text, label }: { text: string; label: string }) {
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

export function ApprovalTerms({ payment, request, local, expired, left }: Props) {
  // Once expired nothing will be paid: what the budget would be "after this" no longer applies.
  const after = expired ? undefined : budgetAfter(payment);
  return (
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
      {/* Ticks every second: never read out by the conversation's live region. */}
      <dd data-testid="approval-countdown" aria-live="off">
        {expired ? "Expired" : Number.isFinite(left) ? `in ${countdown(left)}` : ""}
      </dd>
    </dl>
  );
}
