import { describeApproval } from "../../../src/client/index.js";
import type { ApprovalRequest, PaymentUpdate } from "../chat/types.js";
import { readable, shortHash, usd } from "../format.js";
import { ApprovalTerms } from "./ApprovalTerms.js";
import type { ApprovalState, CardProps as Props } from "./card-types.js";
import { approvalExpired, useNow } from "./useNow.js";

/**
 * A payment awaiting the wallet's approval, in words: what is paid, to whom, for what, on which
 * network, from which wallet, what the budget keeps after it, and until when; the raw data the
 * wallet signs behind "Details". Approve and Reject, and why they may be off.
 */

function whatIsSigned(payment: PaymentUpdate): string {
  return payment.approval?.sign.kind === "evm-typed-data"
    ? "an EIP-712 transfer authorization (eth_signTypedData_v4)"
    : "a Solana transfer transaction";
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
  const expired = approvalExpired(request.expiresAt, now);
  const sameWallet = wallet?.address.toLowerCase() === request.wallet.toLowerCase();
  // What would be signed must be what the card shows (amount, payee, wallet); otherwise no signing.
  const { mismatches } = describeApproval(payment);
  const busy = approval?.phase === "signing" || approval?.phase === "sending";
  // A chat card is answerable while its tool part asks.
  const open = tool === undefined || tool.state === "approval-requested";
  const off = !canAct || superseded || busy || expired || !open;
  const local = payment.network !== undefined && localNetworks.has(payment.network);
  const said = approval?.error ?? tool?.error;
  const error = said === undefined ? undefined : readable(said, localNetworks);
  return (
    <div className="approval" data-testid="approval">
      <p className="approval-text">Your wallet is asked to sign this payment:</p>
      <ApprovalTerms
        payment={payment}
        request={request}
        local={local}
        expired={expired}
        left={expiresAt - now}
      />
      <p className="muted small">
        Your wallet signs {whatIsSigned(payment)}; nothing moves before you approve.
      </p>
      {!sameWallet && !expired ? (
        // Another wallet connected is a mismatch to hear at once; no wallet yet is only what to do.
        <p className="approval-warning" role={wallet ? "alert" : undefined}>
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
      <ApprovalActions
        label={approveLabel(payment, approval)}
        approveOff={off || !sameWallet || mismatches.length > 0}
        rejectOff={off}
        onApprove={() => onApprove(payment)}
        onReject={() => onReject(payment)}
      />
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
      <SignedData sign={request.sign} />
    </div>
  );
}

/** While the page works on an approval the button says which step it waits on, not the amount. */
function approveLabel(payment: PaymentUpdate, approval: ApprovalState | undefined): string {
  if (approval?.phase === "signing") return "Sign in your wallet…";
  if (approval?.phase === "sending") return "Sending…";
  return `Approve ${usd(payment.amount?.usd)}`;
}

interface ActionsProps {
  label: string;
  /** Approving also needs the wallet asked for and terms that match what would be signed. */
  approveOff: boolean;
  rejectOff: boolean;
  onApprove(): void;
  onReject(): void;
}

/**
 * The answer's buttons turn off once pressed: focus goes to the card first, so a keyboard or screen
 * reader user stays on the payment and hears how it goes, instead of falling back to the page's top.
 */
function toCard(button: HTMLElement, then: () => void): void {
  button.closest<HTMLElement>("[data-testid=payment-card]")?.focus();
  then();
}

function ApprovalActions({ label, approveOff, rejectOff, onApprove, onReject }: ActionsProps) {
  return (
    <div className="approval-actions">
      <button
        type="button"
        className="primary"
        disabled={approveOff}
        onClick={(e) => toCard(e.currentTarget, onApprove)}
      >
        {label}
      </button>
      <button type="button" disabled={rejectOff} onClick={(e) => toCard(e.currentTarget, onReject)}>
        Reject
      </button>
    </div>
  );
}

/** Behind "Details", for whoever wants to check the words above against what the wallet signs. */
function SignedData({ sign }: { sign: ApprovalRequest["sign"] }) {
  return (
    <details className="approval-details" data-testid="approval-details">
      <summary>Details: the raw data your wallet signs</summary>
      <pre>{sign.kind === "evm-typed-data" ? JSON.stringify(sign.typedData, null, 2) : sign.transaction}</pre>
    </details>
  );
}
