import type { ErrorPayload, PaymentUpdate } from "../chat/types.js";
import type { PageWallet } from "../wallet/types.js";

/** What a payment card is given (PaymentCard.tsx), and its approval box a part of (ApprovalBox.tsx). */

/** What the page is doing about this card's approval: signing in the wallet, sending, or what went wrong. */
export interface ApprovalState {
  phase: "signing" | "sending" | "idle";
  error?: string;
}

export interface CardProps {
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
