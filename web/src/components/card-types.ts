import type { ErrorPayload, PaymentUpdate } from "../chat/types.js";
import type { PageWallet } from "../wallet/types.js";

/** What a payment card is given (PaymentCard.tsx), and its approval box a part of (ApprovalBox.tsx). */

/** What the page is doing about this card's approval: signing in the wallet, sending, or what went wrong. */
export interface ApprovalState {
  phase: "signing" | "sending" | "idle";
  error?: string;
}

/** What a payment's chat tool part says (web/src/chat/approvals.ts): its state, and why an answer failed. */
export interface PaymentToolState {
  state: string;
  /** The descriptor's `refusal` (asking again) or the part's error (it ended). */
  error?: string | undefined;
}

export interface CardProps {
  payment: PaymentUpdate;
  /** `e:` lines that name this payment. */
  errors: ErrorPayload[];
  wallet: PageWallet | undefined;
  approval: ApprovalState | undefined;
  /**
   * A chat card's tool part: approvable only while `approval-requested`; why an answer failed.
   * Absent where the page answers the payment itself (the approval page).
   */
  tool?: PaymentToolState | undefined;
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
