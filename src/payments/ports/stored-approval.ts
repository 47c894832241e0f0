import type { PaymentPayload } from "@x402/core/types";
import type { WalletSigningRequest } from "../../chains/index.js";
import type { SpendingLimitsInput } from "../../protocol/index.js";
import type { Target } from "../x402/index.js";
import type { PaymentRecord } from "./ledger.js";
import type { KeyGrant } from "./payer.js";

/**
 * What a payment awaiting approval keeps in its ledger row (plain JSON, never a signature). Its own
 * module so the pipeline (which writes it) and the approval desk (which reads it) need not import
 * each other.
 */
export interface StoredApproval {
  /** The x402 payload the SDK built, complete but for the wallet's signature. */
  payload: PaymentPayload;
  /** What the wallet was asked to sign. */
  sign: WalletSigningRequest;
  /** The paid call, to the service that issued the demand. */
  target: Target;
  /** The authorization window signed, in seconds. */
  window: number;
  /** The service's name as discovery listed it, when known (display only). */
  serviceName?: string;
  /**
   * The caps of the operator's key that asked for it (atomic USD as decimal strings), so an answer
   * from the approval page, which has no caller, is held to them too.
   */
  grant?: StoredGrant;
  /**
   * The spending limits the request that asked set (amounts as atomic decimal strings), so an answer
   * from the approval page, which sends none, is checked within them, as the asking caller's would be.
   */
  limits?: StoredLimits;
}

/** A request's `SpendingLimitsInput` as plain JSON (no bigint). */
export type StoredLimits = Partial<Record<(typeof LIMIT_AMOUNTS)[number], string>> & {
  allowedNetworks?: string[];
  allowedServices?: string[];
};
const LIMIT_AMOUNTS = ["perTransaction", "perRequest", "daily", "approvalAbove"] as const;

/** A request's limits as a stored approval keeps them. */
export function storeLimits(limits: SpendingLimitsInput): StoredLimits {
  const stored: StoredLimits = {};
  for (const key of LIMIT_AMOUNTS) if (limits[key] !== undefined) stored[key] = `${limits[key]}`;
  if (limits.allowedNetworks) stored.allowedNetworks = [...limits.allowedNetworks];
  if (limits.allowedServices) stored.allowedServices = [...limits.allowedServices];
  return stored;
}

/** The limits a stored approval kept, if any (rows asked before they were kept have none). */
export function storedLimits(terms: Pick<StoredApproval, "limits">): SpendingLimitsInput | undefined {
  const stored = terms.limits;
  if (!stored) return undefined;
  const limits: SpendingLimitsInput = {};
  for (const key of LIMIT_AMOUNTS) if (stored[key] !== undefined) limits[key] = BigInt(stored[key]);
  if (stored.allowedNetworks) limits.allowedNetworks = [...stored.allowedNetworks];
  if (stored.allowedServices) limits.allowedServices = [...stored.allowedServices];
  return limits;
}

/** A `KeyGrant` as plain JSON (no bigint). */
export interface StoredGrant {
  name: string;
  perTransaction?: string;
  perRequest?: string;
  daily?: string;
  wallets?: string[];
}

const AMOUNTS = ["perTransaction", "perRequest", "daily"] as const;

/** A key's grant as a stored approval keeps it. */
export function storeGrant(grant: KeyGrant): StoredGrant {
  const stored: StoredGrant = { name: grant.name };
  for (const key of AMOUNTS) {
    const value = grant[key];
    if (value !== undefined) stored[key] = value.toString();
  }
  if (grant.wallets) stored.wallets = [...grant.wallets];
  return stored;
}

/** The grant a stored approval kept, if any. */
export function storedGrant(terms: Pick<StoredApproval, "grant">): KeyGrant | undefined {
  const stored = terms.grant;
  if (!stored) return undefined;
  const grant: KeyGrant = { name: stored.name };
  for (const key of AMOUNTS) {
    const value = stored[key];
    if (value !== undefined) grant[key] = BigInt(value);
  }
  if (stored.wallets) grant.wallets = [...stored.wallets];
  return grant;
}

/** The service's name a payment's approval row recorded, if any (display only). */
export function storedServiceName(record: PaymentRecord): string | undefined {
  return (record.approval as Partial<StoredApproval> | null)?.serviceName;
}
