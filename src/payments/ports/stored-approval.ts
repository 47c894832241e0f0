import type { PaymentPayload } from "@x402/core/types";
import type { WalletSigningRequest } from "../../chains/index.js";
import type { Target } from "../x402/index.js";
import type { PaymentRecord } from "./ledger.js";

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
}

/** The service's name a payment's approval row recorded, if any (display only). */
export function storedServiceName(record: PaymentRecord): string | undefined {
  return (record.approval as Partial<StoredApproval> | null)?.serviceName;
}
