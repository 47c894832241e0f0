import { useState } from "react";
import { checkSolanaApproval, checkSolanaFunding } from "../../src/client/index.js";
import type { ApprovalView } from "../../src/protocol/approval-view.js";
import type { PaymentUpdate } from "./chat/types.js";
import type { ApprovalState } from "./components/card-types.js";
import { shortHash } from "./format.js";
import type { PageWallet } from "./wallet/types.js";

/** The approval page's answer (ApprovePage.tsx): what the wallet signs, and what the service says. */

/** What POST /api/approvals/:id answers. */
export interface Outcome {
  status: string;
  amount: { usd: string };
  transaction?: string;
  error?: { code: string; message: string };
}

export async function problemText(response: Response): Promise<string> {
  const body = (await response.json().catch(() => ({}))) as { detail?: string; code?: string };
  return `${body.detail ?? `The service answered ${response.status}.`}${body.code ? ` (${body.code})` : ""}`;
}

function walletErrorText(error: unknown): string {
  const e = error as { code?: number; shortMessage?: string; message?: string; cause?: { code?: number } };
  if (e?.code === 4001 || e?.cause?.code === 4001)
    return "You declined to sign in your wallet: nothing was paid.";
  return `The wallet could not sign: ${e?.shortMessage ?? e?.message ?? String(error)}`;
}

/** Approving and declining: the wallet signs, the answer goes to POST /api/approvals/:id. */
export function useAnswer(
  paymentId: string,
  view: ApprovalView | undefined,
  wallet: PageWallet | undefined,
  local: boolean,
) {
  const [approval, setApproval] = useState<ApprovalState>();
  const [outcome, setOutcome] = useState<Outcome>();
  const [declined, setDeclined] = useState(false);

  /** Sign in the wallet (what `payment.approval.sign` asks), then send it with `extra`. */
  const signAndSend = async (payment: PaymentUpdate, extra: Record<string, unknown> = {}) => {
    if (!wallet) return;
    setApproval({ phase: "signing" });
    let answer: Record<string, unknown>;
    try {
      answer = { ...(await wallet.approve(payment, { local })) };
    } catch (e) {
      setApproval({ phase: "idle", error: walletErrorText(e) });
      return;
    }
    setApproval({ phase: "sending" });
    try {
      const response = await fetch(`/api/approvals/${encodeURIComponent(paymentId)}`, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ ...answer, ...extra, walletAddress: wallet.address }),
      });
      if (!response.ok) {
        setApproval({ phase: "idle", error: await problemText(response) });
        return;
      }
      setOutcome((await response.json()) as Outcome);
      setApproval({ phase: "idle" });
    } catch {
      setApproval({ phase: "idle", error: "The service cannot be reached: nothing was paid. Try again." });
    }
  };

  /**
   * Declining is signed too (EVM: the wallet signs the view's `decline` message), so that a URL
   * alone declines nothing. Without it (Solana), nothing is sent: the payment lapses unpaid.
   */
  const decline = async (payment: PaymentUpdate) => {
    const sign = view?.decline;
    if (!sign || !payment.approval) {
      setDeclined(true);
      return;
    }
    if (!wallet || wallet.address.toLowerCase() !== view.wallet.toLowerCase()) {
      setApproval({
        phase: "idle",
        error: `Only wallet ${shortHash(view.wallet)} can decline this payment: connect it, or just close this page (nothing is paid unless it signs).`,
      });
      return;
    }
    await signAndSend({ ...payment, approval: { ...payment.approval, sign } }, { reject: true });
  };

  /**
   * A Solana transaction is checked against the card before the wallet sees it (EVM: ApprovalBox):
   * a payment's as an x402 payment, a tab's funding as the SDK checks one (it is no payment: the
   * wallet pays its fee, opens the session key's account and sends it SOL for its fee).
   */
  const approve = async (payment: PaymentUpdate) => {
    const mismatches = view?.tab
      ? await fundingMismatches(view, payment)
      : await checkSolanaApproval(payment);
    if (mismatches.length > 0) {
      setApproval({
        phase: "idle",
        error: `Not signing: the transaction does not match this card (${mismatches.join("; ")}).`,
      });
      return;
    }
    await signAndSend(payment);
  };

  return { approval, outcome, declined, approve, decline };
}

async function fundingMismatches(view: ApprovalView, payment: PaymentUpdate): Promise<string[]> {
  const sign = payment.approval?.sign;
  if (sign?.kind !== "solana-transaction") return [];
  const { wallet, network, payTo: session, amount } = view;
  return checkSolanaFunding({ sign, wallet, network, session, amount }).then(
    () => [],
    (error: unknown) => [error instanceof Error ? error.message : String(error)],
  );
}
