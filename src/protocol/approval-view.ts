import type { ApprovalRequest } from "./events.js";
import type { LedgerStatus } from "./status.js";

/**
 * What the approval page shows of a payment that waits for a wallet (`GET /api/approvals/:paymentId`,
 * docs/protocol.md "The approval page"), in words and numbers; no secret (the terms the wallet
 * signs are none). The service answers it (src/payments); the web page reads it (web/src).
 */
export interface ApprovalView {
  paymentId: string;
  /** The ledger's status; `expired` once the window has passed, even before the row says so. */
  status: LedgerStatus;
  amount: { atomic: string; usd: string; asset: string };
  /** The token's name (the EIP-712 domain's, else USDC: only USD stablecoins are paid). */
  token: string;
  network: string;
  networkName: string;
  payTo: string;
  service: { url: string; name?: string };
  /** The wallet that must sign. */
  wallet: string;
  expiresAt?: string;
  /** While it can still be approved: what the wallet signs (the chat's `p:` `approval` object). */
  approval?: ApprovalRequest;
  /** While it can still be approved, EVM only: what the wallet signs to decline it (a message naming the payment and the wallet). */
  decline?: ApprovalRequest["sign"];
  /**
   * Present when this is a tab's funding, not a payment (docs/protocol.md, "Tabs"): the funding in
   * words, when the tab ends, and the tab's own status (`paymentId` is then the tab's id).
   */
  tab?: { words: string; endsAt: string; status: string };
}
