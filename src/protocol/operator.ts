/**
 * The operator API's answers (`/api/operator/*`, docs/deploy.md#operating-it), defined once: the
 * service builds them (src/operator) and the operator page reads them (web/src/operator). Amounts
 * are USD decimal strings, times ISO-8601.
 */

/** The route families an operator key may use. */
export const KEY_SCOPES = ["chat", "mcp", "history"] as const;
export type KeyScope = (typeof KEY_SCOPES)[number];

export type KeyStatus = "active" | "revoked" | "expired";

/** A key's caps; null: the service's own. */
export interface KeyLimitsView {
  perTransaction: string | null;
  perRequest: string | null;
  daily: string | null;
}

/** A key as the operator sees it: never its token. */
export interface KeyView {
  name: string;
  scopes: KeyScope[];
  /** The wallets the key may pay from; null: any. */
  wallets: string[] | null;
  limits: KeyLimitsView;
  status: KeyStatus;
  createdAt: string;
  expiresAt: string | null;
  revokedAt: string | null;
  /** What the key committed in the last 24 hours, over every wallet. */
  spentTodayUsd: string;
}

export interface PauseView {
  scope: "all" | "key";
  key?: string;
  reason: string;
  since: string;
  by: string;
}

/** What a pause or a resume names: every payment, or one key's. */
export type PauseTarget = { all: true } | { key: string };

/** A payment as GET /api/operator/payments and /unclear show it. */
export interface OperatorPayment {
  paymentId: string;
  caller: string | null;
  wallet: string;
  service: string;
  network: string;
  amountUsd: string;
  status: string;
  createdAt: string;
  updatedAt: string;
  txHash: string | null;
}
