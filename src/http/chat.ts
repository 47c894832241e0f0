import { type AgentDeps, runTurn, type TurnInput, type TurnPrelude } from "../agent/index.js";
import { AppError } from "../errors/index.js";
import type { Logger } from "../log/index.js";
import type { CallerAnswer, Payer } from "../payments/index.js";
import {
  type ChatRequest,
  PAYMENT_STATUS,
  type PaymentStatus,
  PROTOCOL_HEADER,
  PROTOCOL_VERSION,
  type StreamEvent,
  type ValidatedApproval,
} from "../protocol/index.js";
import { chooseMode, jsonResponse, type Mode, streamHeaders } from "./answer.js";
import { EventStream } from "./event-stream.js";
import type { HeldClaim, IdempotencyStore } from "./idempotency.js";
import type { Lifecycle } from "./lifecycle.js";
import type { ChatRouteVars, VarsContext } from "./vars.js";

/**
 * `POST /api/chat` once its middleware has let it through (src/http/app.ts): the request is valid,
 * its caller authenticated and within quota, and its idempotency key (if any) claimed by this
 * attempt. What is left is the chat: take up an approval's answer, then stream one agent turn.
 */
export interface ChatRouteDeps {
  agent: AgentDeps;
  lifecycle: Lifecycle;
  logger: Logger;
  requestTimeoutMs: number;
  heartbeatMs: number;
  /** The clock (deadlines, the turn's payments); default the system's. */
  now?: () => Date;
  /**
   * Take up a payment answered in the user's wallet (the request's `approval`): throws AppError
   * before the stream opens when it cannot be used; what it returns runs as the turn's first step.
   */
  resumeApproval?: (input: CallerAnswer) => Promise<TurnPrelude>;
}

export type { IdempotencyStore };

/** How long the `d:` line waits for the idempotent outcome to be stored. */
const RECORD_BEFORE_FINISH_MS = 2000;

/** Wait for `work`, but no longer than `ms` (the work goes on). */
async function boundedWait(work: Promise<unknown>, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
  });
  await Promise.race([work, late]);
  clearTimeout(timer);
}

/** The abort reason when the client goes away (no AppError: nobody is left to tell). */
const CLIENT_LEFT = "client disconnected";

type RecordOutcome = (
  events: StreamEvent[],
  clientLeft: boolean,
  background: Promise<unknown> | undefined, // the work still running after the stream ended, if any
) => Promise<void>;

/** Whether a payment the events tell of had no outcome yet when the stream ended (in flight, or unclear). */
function unfinished(events: StreamEvent[]): boolean {
  const last = new Map<string, PaymentStatus>();
  for (const e of events) if (e.type === "payment") last.set(e.payment.paymentId, e.payment.status);
  return [...last.values()].some((status) => PAYMENT_STATUS[status].inFlight || status === "unknown");
}

/**
 * Keep an attempt's outcome for replay, unless it is not one yet: a payment had no outcome (its
 * record is the ledger's), or the client left while a tool ran (`leftEarly`: it may yet pay). The
 * claim is then held until the background work ends (a retry hears it is in progress) and let
 * lapse, so the next attempt rebuilds from the ledger, as after a crash (or runs, if nothing paid).
 */
async function keepOutcome(
  held: HeldClaim,
  events: StreamEvent[],
  background: Promise<unknown> | undefined,
  leftEarly = false,
): Promise<void> {
  if (!leftEarly && !unfinished(events)) return held.complete({ events });
  await background;
  await held.lapse();
}

/** POST /api/chat: stream one agent turn (an approval's answer runs first, as its prelude). */
export async function handleChat(c: VarsContext<ChatRouteVars>, deps: ChatRouteDeps): Promise<Response> {
  const request = c.var.chat;
  const { claim: held } = c.var;
  // Once the claim is lost, another attempt may answer the request: its payments reserve nothing new.
  const payer = held ? { ...c.var.payer, claim: held.lost } : c.var.payer;
  const mode = chooseMode(c.req.header("accept"));
  const clientSignal = c.req.raw.signal;
  if (request.approval) {
    const prelude = await takeUpApproval(c, deps, request.approval);
    return startTurn(deps, request, mode, {
      payer,
      prelude,
      clientSignal,
      ...(held
        ? { record: (events, _left, background) => keepOutcome(held, events, background), lost: held.lost }
        : {}),
    });
  }
  // Abandoned before any payment line with nothing left running: forgotten, so a retry runs. A tool
  // still running may yet pay (pay streams nothing before its probe and admission): keepOutcome.
  const record: RecordOutcome | undefined = held
    ? (events, clientLeft, background) => {
        const leftEarly = clientLeft && !events.some((e) => e.type === "payment");
        return leftEarly && !background ? held.release() : keepOutcome(held, events, background, leftEarly);
      }
    : undefined;
  return startTurn(deps, request, mode, {
    payer,
    clientSignal,
    ...(record && held ? { record, lost: held.lost } : {}),
  });
}

/** Check an approval's answer before the stream opens; when it cannot be used, the same answer may come again. */
async function takeUpApproval(
  c: VarsContext<ChatRouteVars>,
  deps: ChatRouteDeps,
  answer: ValidatedApproval,
): Promise<TurnPrelude> {
  const { payer } = c.var;
  if (!deps.resumeApproval || !payer.wallet) {
    throw new AppError("approval_not_found", "Payments are off on this server: nothing awaits approval.");
  }
  try {
    return await deps.resumeApproval({
      answer,
      payer: { ...payer, wallet: payer.wallet },
      signal: c.req.raw.signal,
    });
  } catch (error) {
    // Nothing happened: the same answer may be sent again (after a top-up, or once the service is back).
    await c.var.claim?.release().catch(() => {});
    throw error;
  }
}

interface TurnExtra {
  /** Who pays within what; its `scopeId` is this attempt's request id. */
  payer: Payer;
  prelude?: TurnPrelude;
  clientSignal: AbortSignal;
  record?: RecordOutcome;
  /** Aborts when the idempotency claim this attempt holds was lost: it ends, paying nothing new. */
  lost?: AbortSignal;
}

/**
 * The signals of one turn. Two reasons to stop: the client left (the model call stops; payments
 * under way and the idempotent record still finish), or the stream must end now (the deadline, a
 * shutdown, a lost claim): then the turn ends at once with e: and d:, whatever its tools are still
 * doing. `turn` aborts for either, with the first reason (what AbortSignal.any would give, without
 * its cost per request); `cutoff` only for the second. `dispose` undoes every timer and listener.
 */
function turnSignals(deps: ChatRouteDeps, extra: TurnExtra) {
  const turn = new AbortController();
  const cutoff = new AbortController();
  let clientLeft = false;
  const stop = (reason: AppError) => {
    if (cutoff.signal.aborted) return;
    cutoff.abort(reason);
    if (!turn.signal.aborted) turn.abort(reason);
  };
  const now = deps.now ?? (() => new Date());
  const deadline = now().getTime() + deps.requestTimeoutMs;
  const timer = setTimeout(
    () =>
      stop(
        new AppError(
          "deadline_exceeded",
          `The request took longer than ${deps.requestTimeoutMs / 1000} s and was ended.`,
          { details: { timeoutMs: deps.requestTimeoutMs } },
        ),
      ),
    deps.requestTimeoutMs,
  );
  const untrack = deps.lifecycle.track(stop);
  const onClientGone = () => {
    if (clientLeft) return;
    clientLeft = true;
    if (!turn.signal.aborted) turn.abort(CLIENT_LEFT);
  };
  extra.clientSignal.addEventListener("abort", onClientGone, { once: true });
  // The idempotency claim was lost (docs/protocol.md, "After a crash"): another attempt may answer
  // this request now, so this one ends at once and starts no new payment.
  const onClaimLost = () =>
    stop(
      new AppError(
        "idempotency_conflict",
        "This request's Idempotency-Key claim was lost (the store could not renew it); the request ended and starts no new payment. Send it again to get its outcome.",
      ),
    );
  if (extra.lost?.aborted) onClaimLost();
  else extra.lost?.addEventListener("abort", onClaimLost, { once: true });
  return {
    turn: turn.signal,
    cutoff: cutoff.signal,
    deadline,
    onClientGone,
    clientLeft: () => clientLeft,
    /** Stop the timer and listeners (the turn's last line is out). */
    settle() {
      clearTimeout(timer);
      extra.clientSignal.removeEventListener("abort", onClientGone);
      extra.lost?.removeEventListener("abort", onClaimLost);
    },
    /** The turn is no longer open (its bookkeeping is done). */
    untrack,
  };
}

function startTurn(
  deps: ChatRouteDeps,
  request: ChatRequest,
  mode: Mode,
  extra: TurnExtra,
): Response | Promise<Response> {
  const requestId = extra.payer.scopeId;
  const signals = turnSignals(deps, extra);
  const clock = deps.now;
  /** The turn's payments still running after its stream ended (the client left, the deadline). */
  const background: Promise<unknown>[] = [];
  const input: TurnInput = {
    request,
    payer: extra.payer,
    signal: signals.turn,
    cutoff: signals.cutoff,
    deadline: signals.deadline,
    ...(clock ? { now: () => clock().getTime() } : {}),
    onBackground: (work) => {
      background.push(work);
      deps.lifecycle.keep(work);
    },
  };
  if (extra.prelude) input.prelude = extra.prelude;
  const record = extra.record;
  const seen: StreamEvent[] = [];
  /**
   * Runs the turn. With an idempotency claim, the outcome is stored before the `d:` line goes
   * out: a client that retries the moment it reads `d:` gets the replay, never
   * `idempotency_in_progress` (the write is bounded, so a slow store cannot hold the line back
   * for long; it then finishes in the background).
   */
  const run = async (emit: (event: StreamEvent) => void, ended: () => void) => {
    let finish: StreamEvent | undefined;
    try {
      return await runTurn(
        deps.agent,
        input,
        record
          ? (event) => {
              seen.push(event);
              if (event.type === "finish") finish = event;
              else emit(event);
            }
          : emit,
      );
    } finally {
      signals.settle();
      if (record) {
        const running = background.length > 0 ? Promise.allSettled(background) : undefined;
        const stored = record(seen, signals.clientLeft(), running).catch((error: unknown) =>
          deps.logger.error("could not store the idempotent outcome", { requestId, err: error }),
        );
        await boundedWait(stored, RECORD_BEFORE_FINISH_MS);
        if (finish) emit(finish);
        ended();
        await stored;
      } else ended();
      signals.untrack();
    }
  };

  if (mode === "json") {
    return jsonResponse(run, {
      "Cache-Control": "no-cache",
      "X-Accel-Buffering": "no",
      [PROTOCOL_HEADER]: PROTOCOL_VERSION,
      "X-Request-Id": requestId,
    });
  }

  const stream = new EventStream(mode, deps.heartbeatMs, signals.onClientGone);
  run(
    (event) => stream.emit(event),
    () => stream.close(),
  ).catch((error: unknown) => {
    deps.logger.error("turn crashed", { requestId, err: error });
    stream.close();
  });
  return new Response(stream.readable, { status: 200, headers: streamHeaders(requestId, mode) });
}
