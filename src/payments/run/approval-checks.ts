import type { PaymentPayload } from "@x402/core/types";
import {
  ApprovalLapsed,
  type Chains,
  ChainUnreadable,
  familyOf,
  type WalletAnswer,
  WalletAnswerMismatch,
  WalletCannotPay,
} from "../../chains/index.js";
import { AppError } from "../../errors/index.js";
import { formatUsd } from "../../money/index.js";
import type { ValidatedApproval, Wallet } from "../../protocol/index.js";
import { networkLabel } from "../../protocol/index.js";
import {
  type PaymentEvents,
  type PaymentPauses,
  type PaymentRecord,
  type StoredApproval,
  stopFor,
} from "../ports/index.js";
import { type ApprovalRefusal, approvalDetails, type Reason } from "../rules/index.js";
import { checkSigned } from "../x402/index.js";
import { refusedEarly, tell } from "./events.js";
import type { PaymentRun } from "./run.js";

/**
 * The checks `ApprovalDesk.resume` runs on a wallet's answer, one function per step of the
 * documented order (approval.ts lists it). Each throws the AppError the client reads, or returns
 * what the next step needs.
 */

/**
 * Who may answer a payment. `caller`: a request of the caller that asked for it (the chat: the same
 * bearer identity, or none). `page`: this service's approval page, which has no bearer identity;
 * only the wallet's own signature (checked next, on chain) can settle it there.
 */
export type AnswerBinding = { kind: "caller"; caller?: string | undefined } | { kind: "page" };

/** Who answers: the payment exists, belongs to this wallet and, bound to a caller, was asked for by it. */
export function checkOwner(
  record: PaymentRecord | undefined,
  wallet: Wallet,
  binding: AnswerBinding,
): PaymentRecord {
  if (!record) throw new AppError("approval_not_found", "No payment with this id awaits approval.");
  if (record.wallet !== wallet.address) {
    throw new AppError("approval_wrong_wallet", "This payment belongs to another wallet.");
  }
  if (binding.kind === "caller" && (record.caller ?? null) !== (binding.caller ?? null)) {
    throw new AppError("approval_wrong_caller", "This payment was asked for by another caller.");
  }
  return record;
}

export function stored(record: PaymentRecord): StoredApproval {
  const approval = record.approval as Partial<StoredApproval> | null;
  if (!approval?.payload || !approval.sign || !approval.target || !approval.window) {
    throw new AppError("approval_not_found", "This payment was never waiting for a wallet's approval.");
  }
  return approval as StoredApproval;
}

/** The payment still awaits an answer (`message` names it: "$0.01 to https://..."). */
export function checkAwaiting(record: PaymentRecord, message: string): void {
  if (record.status === "awaiting_approval") return;
  if (record.status === "expired")
    throw new AppError("approval_expired", `The approval window for ${message} has passed.`);
  throw new AppError("approval_used", `The payment of ${message} was already ${record.status}.`, {
    details: { paymentId: record.paymentId, paymentStatus: record.status },
  });
}

function toWalletAnswer(answer: ValidatedApproval): WalletAnswer | undefined {
  if (answer.kind === "signature") return { signature: answer.signature };
  if (answer.kind === "transaction") return { transaction: answer.transaction };
  return undefined;
}

/** The wallet's answer completes the stored payment, checked on chain for this wallet. */
export async function completeAnswer(
  chains: Pick<Chains, "connection">,
  record: PaymentRecord,
  terms: StoredApproval,
  answer: ValidatedApproval,
  wallet: Wallet,
): Promise<PaymentPayload> {
  const family = familyOf(record.network);
  const reply = toWalletAnswer(answer);
  if (!family || !reply) throw new AppError("approval_invalid", "This answer cannot approve the payment.");
  try {
    return await family.completeForWallet(
      terms.payload,
      terms.sign,
      reply,
      wallet.address,
      chains.connection(record.network),
    );
  } catch (error) {
    // The signature holds, but it could never move this wallet's funds: nothing is signed away.
    if (error instanceof WalletCannotPay) {
      throw new AppError("payment_unavailable", `${error.message} Nothing was paid.`, {
        details: { reason: error.reason },
      });
    }
    // Too late for the chain, though within the window shown: nothing is sent.
    if (error instanceof ApprovalLapsed) {
      throw new AppError(
        "approval_expired",
        `The approval came too late for ${networkLabel(record.network)}: ${error.message}. Nothing was paid; ask again.`,
      );
    }
    // The chain did not answer: no verdict either way, the payment keeps waiting.
    if (error instanceof ChainUnreadable) {
      throw new AppError(
        "payment_failed",
        `Could not check the wallet's signature on ${networkLabel(record.network)} (${error.message}). Nothing was paid; send the same answer again.`,
      );
    }
    const why = error instanceof WalletAnswerMismatch ? error.message : "the answer could not be read";
    throw new AppError("approval_invalid", `The approval does not sign the stored payment: ${why}.`);
  }
}

/** A refusal of a stored payment, as the client reads it. */
export function refusalError(refusal: ApprovalRefusal): AppError {
  return new AppError(refusal.reason, refusal.message, { details: refusal.details });
}

/** Refusals of an approved payment that leave it waiting: a limit, the kill switch, the balance. */
const WAITING_REFUSALS = new Set<string>(["limit_exceeded", "payments_paused", "insufficient_balance"]);

/**
 * An approved payment refused now (it keeps waiting, or its key ended) is told as a chat's refusal
 * is, so the audit trail and the metrics hear it: the wallet's approval alone was told before the checks.
 */
export function tellRefusal(
  events: PaymentEvents | undefined,
  { record, wallet, at }: { record: PaymentRecord; wallet: Wallet; at: Date },
  error: unknown,
): void {
  if (!(error instanceof AppError)) return;
  // Also a payment whose key ended since it asked: refused for good, it lapses at its expiry.
  const keyEnded = error.code === "payment_unavailable" && /^key_/.test(String(error.details?.reason));
  if (!WAITING_REFUSALS.has(error.code) && !keyEnded) return;
  const payer = { scopeId: record.scopeId, caller: record.caller ?? undefined, wallet };
  const reason: Reason = keyEnded ? "key_ended" : (error.code as Reason);
  const said = { reason, message: error.message, service: record.service };
  const { paymentId, amount, network, payTo } = record;
  tell(events, () => ({ ...refusedEarly(payer, at, said), waiting: { paymentId, amount, network, payTo } }));
}

/** The wallet holds the price (read from the chain now). */
export async function checkBalance(
  chains: Pick<Chains, "balance">,
  record: PaymentRecord,
  wallet: Wallet,
): Promise<void> {
  const balance = await chains.balance(record.network, record.asset, wallet.address).catch(() => undefined);
  if (balance === undefined) {
    throw new AppError(
      "payment_failed",
      `Could not read the wallet's balance on ${networkLabel(record.network)}.`,
      {
        details: { paymentId: record.paymentId },
      },
    );
  }
  if (balance < record.amount) {
    throw new AppError(
      "insufficient_balance",
      `The wallet holds $${formatUsd(balance)}, less than the $${formatUsd(record.amount)} price.`,
      { details: { ...approvalDetails(record), balanceUsd: formatUsd(balance) } },
    );
  }
}

/** The completed payment signs the stored terms within their window: its authorization. */
export function authorizationOf(
  completed: PaymentPayload,
  record: PaymentRecord,
  terms: StoredApproval,
  message: string,
  now: Date,
): Record<string, string> {
  try {
    return checkSigned(
      completed,
      record.network,
      {
        amount: record.amount,
        payTo: record.payTo,
        asset: record.asset,
        maxTimeoutSeconds: terms.window,
        nowS: Math.floor(now.getTime() / 1000),
      },
      "approval",
    );
  } catch {
    throw new AppError("approval_expired", `The approval window for ${message} has passed.`);
  }
}

/**
 * The kill switch (docs/deploy.md#operating-it): the payment keeps waiting, to approve on resuming.
 * A payment asked for by an operator key since revoked or expired is not approved at all. Read
 * again once `reserved` (a reservation can outlast the pause's answer, waiting on the wallet's
 * lock): the payment is then dropped unsent, its row failed.
 */
export async function refuseIfStopped(
  pauses: PaymentPauses | undefined,
  record: PaymentRecord,
  reserved?: Pick<PaymentRun, "fail">,
): Promise<void> {
  const stop = stopFor(pauses, record.caller ?? undefined, undefined, reserved !== undefined);
  if (!stop) return;
  if (reserved) await reserved.fail(stop.reason, stop.message);
  if (stop.reason === "payments_paused")
    throw new AppError("payments_paused", stop.message, {
      details: { paymentId: record.paymentId, ...stop.details },
    });
  const ended = stop.details.key;
  const what = reserved ? "the approved payment was not sent" : "it can no longer be approved";
  throw new AppError(
    "payment_unavailable",
    `The API key that asked for this payment was ${ended}: ${what}. Nothing was paid.`,
    { details: { paymentId: record.paymentId, reason: `key_${ended}` } },
  );
}
