import { createHash } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { type Chains, parseWallet } from "../../chains/index.js";
import { AppError } from "../../errors/index.js";
import { scrubSecrets } from "../../log/index.js";
import { formatUsd } from "../../money/index.js";
import {
  type ApprovalView,
  cleanUntrusted,
  networkLabel,
  statusAt,
  type ValidatedApproval,
  type Wallet,
} from "../../protocol/index.js";
import type { PayOutput } from "../../tools/contract.js";
import type { DeliveredData, Ledger, PaymentPauses, PaymentRecord, StoredApproval } from "../ports/index.js";
import type { ApprovalDesk, Resumed } from "../run/index.js";
import { toPayOutput } from "./outputs.js";
import { checkDecline, declineRequest } from "./page-decline.js";

/** What the page shows: a wire type (src/protocol/approval-view.ts). */
export type { ApprovalView };

/**
 * Approval on this service's approval page (`${PUBLIC_URL}/approve/<paymentId>`, docs/protocol.md,
 * "The approval page"). The page has no bearer identity: it answers through the same desk and the
 * same checks as the chat (`ApprovalDesk.resume`) but bound to no caller, so only a signature by
 * the payment's own wallet over exactly the stored terms can settle it, and the URL alone pays
 * nothing. The payment is then delivered, and the service's answer is kept (`DeliveredData`, 24 h)
 * for the payment's caller, never returned to the page. A decline must be signed by the wallet too
 * (page-decline.ts: EVM only; a Solana payment lapses unpaid at its expiry instead).
 */

/** The page's answer to a payment, checked for shape (src/protocol `parsePageApproval`). */
export interface PageAnswer {
  answer: ValidatedApproval;
  /** The wallet the page signed with, when it says: it must be the payment's. */
  wallet?: Wallet;
  /** With a reject: the wallet's signature of the view's `decline` message. */
  declineSignature?: `0x${string}`;
  signal: AbortSignal;
}

/** What the page reads back: the payment's state after the answer, never the service's data. */
export interface PageOutcome {
  paymentId: string;
  status: string;
  amount: { atomic: string; usd: string; asset: string };
  network: string;
  transaction?: string;
  payer?: string;
  /** The same answer was sent before: this is the payment as it stands, nothing was done now. */
  replayed: boolean;
  /** Why the payment did not end settled, when it did not (the chat's `e:` code and words). */
  error?: { code: string; message: string };
}

export interface PageApprovalDeps {
  ledger: Pick<Ledger, "get">;
  desk: Pick<ApprovalDesk, "resume">;
  delivered: DeliveredData;
  /** Reads a decline's signature on chain (an EOA's, or a contract wallet's EIP-1271 answer). */
  chains: Pick<Chains, "connection">;
  now: () => Date;
  onError?: (error: unknown, context?: string) => void;
  /** Waits between reads of a racing winner's kept answer (default: 25 ms of the real clock). */
  pause?: (signal: AbortSignal) => Promise<void>;
  /** Whether the key that asked has ended: its payment is no longer offered to approve. */
  pauses?: Pick<PaymentPauses, "keyEnded">;
}

/** How many times the loser of a race reads for the winner's kept answer (about 2 s at 25 ms). */
const RACE_READS = 80;

const silent = { update: () => {}, summary: () => {}, error: () => {} };

/**
 * A signature as one spelling: hex in lower case, and a 65-byte one's `v` as 27/28 (0/1 is the
 * same signature, and both are accepted: docs/protocol.md).
 */
function sameSignature(signature: string): string {
  const hex = signature.toLowerCase();
  if (!/^0x[0-9a-f]{130}$/.test(hex)) return hex;
  const v = Number.parseInt(hex.slice(130), 16);
  return v === 0 || v === 1 ? `${hex.slice(0, 130)}${(v + 27).toString(16)}` : hex;
}

/** A hash of the answer (signature hex in any case is the same answer); the answer itself is never kept. */
function answerHash(answer: ValidatedApproval, declineSignature?: string): string {
  const value =
    answer.kind === "signature"
      ? sameSignature(answer.signature)
      : answer.kind === "transaction"
        ? answer.transaction
        : (declineSignature ?? "").toLowerCase();
  return createHash("sha256").update(`${answer.paymentId}|${answer.kind}|${value}`).digest("hex");
}

function tokenName(terms: StoredApproval | undefined): string {
  const sign = terms?.sign;
  const name = sign?.kind === "evm-typed-data" ? sign.typedData.domain.name : undefined;
  return typeof name === "string" && /^[\w .-]{1,32}$/.test(name) ? name : "USDC";
}

const amountOf = (record: PaymentRecord) => ({
  atomic: record.amount.toString(),
  usd: formatUsd(record.amount),
  asset: record.asset,
});

function stateOf(record: PaymentRecord, replayed: boolean): PageOutcome {
  return {
    paymentId: record.paymentId,
    status: record.status,
    amount: amountOf(record),
    network: record.network,
    ...(record.txHash ? { transaction: record.txHash } : {}),
    ...(record.payer ? { payer: record.payer } : {}),
    replayed,
  };
}

export class PageApprovals {
  constructor(private readonly deps: PageApprovalDeps) {}

  /** What the page shows; undefined for an unknown id or a payment that never waited for a wallet. */
  async view(paymentId: string): Promise<ApprovalView | undefined> {
    const record = await this.deps.ledger.get(paymentId);
    const terms = record?.approval as Partial<StoredApproval> | null | undefined;
    if (!record || !terms?.sign || !terms.target) return undefined;
    const status = statusAt(record.status, record.expiresAt, this.deps.now());
    const expiresAt = record.expiresAt?.toISOString();
    const decline = declineRequest(record);
    return {
      paymentId: record.paymentId,
      status,
      amount: amountOf(record),
      token: tokenName(terms as StoredApproval),
      network: record.network,
      networkName: networkLabel(record.network),
      payTo: record.payTo,
      // Anyone with the page's URL reads this: a key in the service's URL is masked, as in the logs.
      service: {
        url: scrubSecrets(record.service),
        ...(terms.serviceName ? { name: terms.serviceName } : {}),
      },
      wallet: record.wallet,
      ...(expiresAt ? { expiresAt } : {}),
      // A payment its revoked or expired key asked for would be refused once signed: not offered.
      ...(status === "awaiting_approval" && expiresAt && !this.keyEnded(record)
        ? { approval: { wallet: record.wallet, expiresAt, sign: terms.sign } }
        : {}),
      ...(status === "awaiting_approval" && decline ? { decline } : {}),
    };
  }

  private keyEnded(record: PaymentRecord): boolean {
    return record.caller ? this.deps.pauses?.keyEnded?.(record.caller) !== undefined : false;
  }

  /**
   * The wallet's answer from the page. Every check of the chat's approval runs (ApprovalDesk) but
   * the caller's; throws AppError with the chat's approval codes. The same answer again replays
   * the payment's state; a different one for a used payment is `approval_used`.
   */
  async answer(input: PageAnswer): Promise<PageOutcome> {
    const { answer } = input;
    const record = await this.deps.ledger.get(answer.paymentId);
    if (!record) throw new AppError("approval_not_found", "No payment with this id awaits approval.");
    const parsed = parseWallet(record.wallet);
    if (!parsed.ok)
      throw new AppError("approval_not_found", "This payment was never waiting for a wallet's approval.");
    if (input.wallet && input.wallet.address !== parsed.wallet.address) {
      throw new AppError("approval_wrong_wallet", "This payment belongs to another wallet.");
    }
    const hash = answerHash(answer, input.declineSignature);
    if (record.status !== "awaiting_approval") {
      const kept = await this.deps.delivered.read(record.paymentId, this.deps.now());
      if (kept?.answerHash === hash) return stateOf(record, true);
    }
    if (answer.kind === "reject") await checkDecline(this.deps.chains, record, input.declineSignature);
    let resumed: Resumed;
    try {
      resumed = await this.deps.desk.resume({
        answer,
        wallet: parsed.wallet,
        via: "page",
        signal: input.signal,
      });
    } catch (error) {
      const replay = await this.replayOf(error, record.paymentId, hash, input.signal);
      if (replay) return replay;
      throw error;
    }
    // Approved and reserved: the same answer from now on replays instead of being refused.
    await this.keep({ paymentId: record.paymentId, answerHash: hash, keptAt: this.deps.now() });
    const outcome = await resumed.run(silent);
    const output = toPayOutput(outcome);
    if (output.data) {
      const data = cleanUntrusted(output.data).value;
      await this.keep({ paymentId: record.paymentId, answerHash: hash, data, keptAt: this.deps.now() });
    }
    const after = (await this.deps.ledger.get(record.paymentId).catch(() => undefined)) ?? record;
    return {
      ...stateOf(after, false),
      ...(output.error ? { error: { code: output.error.code, message: output.error.message } } : {}),
    };
  }

  /**
   * An answer the payment's own caller sent (the chat, MCP) was taken: its hash is kept as the
   * page's is, so the same answer from the page (the wallet signs one text; the page and the chat
   * may both send it) replays the payment instead of `approval_used`.
   */
  async takenFromCaller(answer: ValidatedApproval): Promise<void> {
    if (answer.kind === "reject") return; // a caller's decline carries no signature to compare
    await this.keep({ paymentId: answer.paymentId, answerHash: answerHash(answer), keptAt: this.deps.now() });
  }

  /** The service's answer kept for a payment approved on the page, if any (for its own caller). */
  async kept(paymentId: string): Promise<PayOutput["data"] | undefined> {
    const entry = await this.deps.delivered.read(paymentId, this.deps.now());
    return entry?.data as PayOutput["data"] | undefined;
  }

  /**
   * The same answer, sent again while the first was being taken (two clicks, a retried request),
   * lost the race to the first: it replays the payment as it stands rather than `approval_used`.
   * The winner keeps its answer's hash just after its reservation, so until a hash is kept the
   * loser reads again for a moment; a different answer's hash, or none by then, is `approval_used`.
   */
  private async replayOf(
    error: unknown,
    paymentId: string,
    hash: string,
    signal: AbortSignal,
  ): Promise<PageOutcome | undefined> {
    if (!(error instanceof AppError) || error.code !== "approval_used") return undefined;
    const pause = this.deps.pause ?? ((s: AbortSignal) => sleep(25, undefined, { signal: s }));
    for (let read = 0; read < RACE_READS; read++) {
      const kept = await this.deps.delivered.read(paymentId, this.deps.now()).catch(() => undefined);
      if (kept) {
        const now = kept.answerHash === hash ? await this.deps.ledger.get(paymentId) : undefined;
        return now ? stateOf(now, true) : undefined;
      }
      if (signal.aborted) return undefined;
      await pause(signal).catch(() => undefined);
    }
    return undefined;
  }

  /** A failure to keep is reported, never thrown: the payment goes on and is recorded in the ledger. */
  private async keep(entry: Parameters<DeliveredData["keep"]>[0]): Promise<void> {
    await this.deps.delivered
      .keep(entry)
      .catch((error: unknown) => this.deps.onError?.(error, "keeping delivered data"));
  }
}

/** A page answer's outcome as the face's callers read a payment's result (`PayOutput`). */
export function pageOutput(outcome: PageOutcome): PayOutput {
  const status: PayOutput["status"] =
    outcome.status === "settled"
      ? "paid"
      : outcome.status === "rejected" || outcome.status === "expired" || outcome.status === "failed"
        ? outcome.status
        : outcome.status === "released"
          ? "failed"
          : "unknown";
  return {
    status,
    paymentId: outcome.paymentId,
    amountUsd: outcome.amount.usd,
    network: outcome.network,
    ...(outcome.transaction ? { transaction: outcome.transaction } : {}),
    ...(outcome.payer ? { payer: outcome.payer } : {}),
    ...(outcome.error ? { error: outcome.error } : {}),
  };
}
