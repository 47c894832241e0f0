import { useState } from "react";
import { describeApproval } from "../../../src/client/index.js";
import type { PaymentUpdate } from "../chat/types.js";
import { networkName, shortHash, usd } from "../format.js";
import type { CardProps as Props } from "./card-types.js";
import { approvalExpired, useNow } from "./useNow.js";

/**
 * A payment awaiting the wallet's approval, in words: what is paid, to whom, for what, on which
 * network, from which wallet, what the budget keeps after it, and until when; the raw data the
 * wallet signs behind "Details". Approve and Reject, and why they may be off.
 */

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

function whatIsSigned(payment: PaymentUpdate): string {
  return payment.approval?.sign.kind === "evm-typed-data"
    ? "an EIP-712 transfer authorization (eth_signTypedData_v4)"
    : "a Solana transfer transaction";
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

export function ApprovalBox({
  payment,
  wallet,
  approval,
  tool,
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
  // A chat card is answerable while its tool part asks.
  const open = tool === undefined || tool.state === "approval-requested";
  const off = !canAct || superseded || busy || expired || !open;
  const local = payment.network !== undefined && localNetworks.has(payment.network);
  const after = budgetAfter(payment);
  const error = approval?.error ?? tool?.error;
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
      <p className="muted small">
        Your wallet signs {whatIsSigned(payment)}; nothing moves before you approve.
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
          disabled={off || !sameWallet || mismatches.length > 0}
          onClick={() => onApprove(payment)}
        >
          {approval?.phase === "signing"
            ? "Sign in your wallet…"
            : approval?.phase === "sending"
              ? "Sending…"
              : `Approve ${usd(payment.amount?.usd)}`}
        </button>
        <button type="button" disabled={off} onClick={() => onReject(payment)}>
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
      {error ? (
        <p className="card-error" role="alert">
          {error}
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
