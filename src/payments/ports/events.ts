import type { PaymentStatus } from "../../protocol/index.js";
import type { AmountLimits, Reason } from "../rules/index.js";

/**
 * What happened to payments, told to whoever watches them (the audit trail, metrics, traces):
 * a port payments call and never wait on. A watcher's failure is its own; it must not throw back
 * into a payment, nor slow it (queue, do not await). No event carries a key, a token or a
 * signature: `signatureHash` is a SHA-256 of the signed authorization, never the signature.
 */

/** The facts every event of one payment shares (as its run knows them). */
export interface PaymentFactsSeen {
  paymentId: string;
  /** What the per-request limit counts within (a chat request, an MCP call). */
  scopeId: string;
  /** The bearer identity (the key's name), null for an anonymous caller. */
  caller: string | null;
  wallet: string;
  /** The paid service's URL. */
  service: string;
  network: string;
  asset: string;
  payTo: string;
  /** Atomic USD units (6 decimals). */
  amount: bigint;
}

export type PaymentEvent =
  /**
   * A payment moved to `status` (its run's state machine: quoted, refused, awaiting_approval,
   * reserved, signed, submitted, settled, unknown, failed, rejected, expired, released). `limits`:
   * the amount limits in force, on `quoted`, `refused` and `reserved`.
   */
  | {
      kind: "step";
      at: Date;
      payment: PaymentFactsSeen;
      status: PaymentStatus;
      reason?: Reason;
      message?: string;
      txHash?: string;
      limits?: AmountLimits;
      signatureHash?: string;
    }
  /** Refused before a payment existed (no wallet, a service not allowed, unreadable demand...). */
  | {
      kind: "refused_early";
      at: Date;
      scopeId: string;
      caller: string | null;
      wallet?: string;
      service?: string;
      reason: Reason;
      message: string;
      /**
       * An approved payment that keeps waiting because a check refused it (a limit, the kill switch,
       * the balance): which one, and what it asks.
       */
      waiting?: { paymentId: string; amount: bigint; network: string; payTo: string };
      /** The offer a quote chose before a later rule refused it (a limit): what it would have paid. */
      offer?: { amount: bigint; network: string; payTo: string };
    }
  /** The reconciler settled an unclear payment from what the chain says. */
  | {
      kind: "reconciled";
      at: Date;
      paymentId: string;
      from: PaymentStatus;
      to: PaymentStatus;
      txHash?: string;
      /** What was paid, and for whom, as the row says (another instance may have sent it). */
      payment: { network: string; amount: bigint; caller: string | null; scopeId: string };
    }
  /** The user's wallet answered a payment that awaited it: through the caller's chat or the page. */
  | {
      kind: "approval_answered";
      at: Date;
      paymentId: string;
      via: "caller" | "page";
      wallet: string;
      answer: "approved" | "declined";
    };

/** Where payment events go. `emit` returns at once and never throws. */
export interface PaymentEvents {
  emit(event: PaymentEvent): void;
}

/** Several watchers as one; one that throws is skipped, never the payment. */
export function fanOut(...watchers: PaymentEvents[]): PaymentEvents {
  return {
    emit(event) {
      for (const watcher of watchers) {
        try {
          watcher.emit(event);
        } catch {
          // A watcher's failure is its own (see the port's contract).
        }
      }
    },
  };
}
