import { AppError } from "../../errors/index.js";
import { formatUsd } from "../../money/index.js";
import type { PaymentStatus } from "../../protocol/index.js";
import type { PayInput, PayOutput } from "../../tools/contract.js";
import type { Ledger } from "../ports/index.js";
import type { PaymentPipeline, PaymentRequest } from "../run/index.js";
import type { Target } from "../x402/index.js";
import { recordOutput, toPayOutput } from "./outputs.js";
import type { QuoteIds } from "./quote-id.js";

/**
 * Paying by a quote id: exactly the quoted offer or nothing, at most once. The id is opened first
 * (`quote_invalid`, `quote_expired`); its payment id is derived from it, so the ledger's primary
 * key lets one payment exist per quote id on every instance: a second call (after the first, at
 * the same time, or after a crash) reads that row back instead of paying. The payment itself runs
 * through the pipeline like any other: the session's limits, the price capped by the quoted one,
 * and the payee, network and asset the quote chose (another is refused as `price_changed`).
 */
export interface QuotedDeps {
  pipeline: PaymentPipeline;
  ledger: Ledger;
  ids: QuoteIds;
  /** Payments by quote id under way in this process: a concurrent call waits for the same one. */
  inflight: Map<string, Promise<PayOutput>>;
  now: () => Date;
}

/** The quoted call as the pipeline takes it, with the quoted price as the most it may pay. */
function inputOf(target: Target, amount: string): PayInput {
  return {
    url: target.url,
    method: target.method,
    ...(target.body !== undefined ? { body: JSON.parse(target.body) as Record<string, unknown> } : {}),
    maxUsd: formatUsd(BigInt(amount)),
  };
}

/**
 * Being sent right now: reserved, signed or submitted end within seconds. A payment awaiting the
 * wallet, or unclear (the reconciler's, minutes), is answered as it stands.
 */
const inFlight = (status: PaymentStatus): boolean =>
  status === "reserved" || status === "signed" || status === "submitted";

/** How long a call that lost the race waits for the winner's payment to end, at most. */
const WINNER_WAIT_MS = 15_000;
const WINNER_POLL_MS = 250;

/**
 * The row another call for the same quote wrote, read again while it is being sent (see inFlight;
 * the winner's settlement takes a moment) or until the wait ends: the loser then answers what the
 * winner did (paid), not the `submitted` it first read. The request's deadline bounds the wait.
 */
async function settledElsewhere(ledger: Ledger, paymentId: string, request: PaymentRequest) {
  const until = Math.min(request.now() + WINNER_WAIT_MS, request.deadline - 1_000);
  for (;;) {
    const row = await ledger.get(paymentId).catch(() => undefined);
    if (!row || !inFlight(row.status) || request.now() >= until || request.signal.aborted) return row;
    await new Promise((resolve) => setTimeout(resolve, WINNER_POLL_MS));
  }
}

export function payQuoted(deps: QuotedDeps, request: PaymentRequest, quoteId: string): Promise<PayOutput> {
  let claims: ReturnType<QuoteIds["open"]>;
  try {
    claims = deps.ids.open(
      quoteId,
      { caller: request.caller ?? null, wallet: request.wallet?.address },
      deps.now().getTime(),
    );
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    const reason = error.code;
    if (reason !== "quote_invalid" && reason !== "quote_expired") throw error;
    // Told as any refusal before a payment: the stream's `e:`, the audit trail and the metrics.
    const refused = (): PayOutput =>
      toPayOutput(
        deps.pipeline.refuseEarly(request, {
          reason,
          message: error.message,
          ...(error.details ? { details: error.details } : {}),
        }),
      );
    if (error.code !== "quote_expired") return Promise.resolve(refused());
    // Expired, but genuine and this caller's: if it was paid (a call cut off by a crash or a lost
    // connection, retried late), that payment is the answer, never "ask for a new quote".
    return deps.ledger.get(deps.ids.paymentIdOf(quoteId)).then(
      (row) => (row ? recordOutput(row, deps.now()) : refused()),
      () => refused(),
    );
  }
  const paymentId = deps.ids.paymentIdOf(quoteId);
  // The service's name the quote was made with (display only: the row, the result, the page).
  const { name } = claims;
  const running = deps.inflight.get(paymentId);
  if (running) return running;
  const paying = (async (): Promise<PayOutput> => {
    const named = (output: PayOutput): PayOutput => (name ? { ...output, serviceName: name } : output);
    const before = await deps.ledger.get(paymentId);
    if (before) {
      // Paid before, or being paid by another call right now: what that payment comes to.
      const latest = inFlight(before.status)
        ? await settledElsewhere(deps.ledger, paymentId, request)
        : before;
      return named(recordOutput(latest ?? before, deps.now()));
    }
    const outcome = await deps.pipeline.pay(request, inputOf(claims.target, claims.amount), {
      paymentId,
      terms: claims.terms,
      ...(name ? { serviceName: name } : {}),
    });
    // Another instance won the race for this id: its row stands, and this attempt sent nothing
    // (the ledger refused the row before anything left the process; nothing was reported).
    if (outcome.status === "unknown" && !outcome.error) {
      const after = await settledElsewhere(deps.ledger, paymentId, request);
      if (after) return named(recordOutput(after, deps.now()));
    }
    return named(toPayOutput(outcome));
  })().finally(() => deps.inflight.delete(paymentId));
  deps.inflight.set(paymentId, paying);
  return paying;
}
