import { AppError } from "../errors/index.js";

/**
 * Tracks open chat turns so a shutdown can stop taking new ones, let open streams finish within a
 * grace period, and end the rest with `e:` (shutting_down) then `d:`. It also keeps the work a
 * turn left running when its stream had to end first (a payment still settling at the deadline),
 * so a shutdown lets that work finish and record its outcome before the store closes.
 */
export class Lifecycle {
  private readonly open = new Set<OpenTurn>();
  private readonly background = new Set<Promise<void>>();
  private draining = false;
  /** Set once the grace period is over: a turn that starts after it is ended at once. */
  private cutoff: AppError | undefined;

  get isDraining(): boolean {
    return this.draining;
  }

  get openTurns(): number {
    return this.open.size;
  }

  get backgroundTasks(): number {
    return this.background.size;
  }

  /** Keep work that outlives its stream until it settles (its outcome is not awaited here). */
  keep(work: Promise<unknown>): void {
    const settled = work.then(
      () => undefined,
      () => undefined,
    );
    this.background.add(settled);
    void settled.then(() => this.background.delete(settled));
  }

  /**
   * Resolves once no turn is open and no work a turn left running remains (its ledger writes
   * done): a serverless function must not return before (src/serverless.ts).
   */
  async idle(): Promise<void> {
    while (this.open.size > 0 || this.background.size > 0) {
      await Promise.all([...[...this.open].map(whenFinished), ...this.background]);
    }
  }

  /** Register a turn; returns a function to call when it has finished. */
  track(abort: (reason: AppError) => void): () => void {
    const turn: OpenTurn = { abort };
    this.open.add(turn);
    if (this.cutoff) abort(this.cutoff);
    return () => {
      this.open.delete(turn);
      turn.finished?.();
    };
  }

  /**
   * Stop accepting turns, wait up to graceMs for open ones, then end the rest (`e:` shutting_down,
   * `d:`) and wait for them, and for work they left running (payments settling), up to
   * backgroundMs: a turn ended that cannot finish (its last store write waits on a database that
   * does not answer) is given up on too. Resolves with what was still running when it gave up
   * (0: everything finished).
   */
  async drain(graceMs: number, backgroundMs = graceMs): Promise<{ abandoned: number }> {
    this.draining = true;
    // Also the turns that start meanwhile (a request that was past its draining check already).
    const all = async () => {
      while (this.open.size > 0) await Promise.all([...this.open].map(whenFinished));
    };
    if ((await within(all(), graceMs)) === "timeout") {
      this.cutoff = new AppError(
        "shutting_down",
        "The server is shutting down; this stream was ended. Retry shortly.",
      );
      for (const turn of this.open.values()) turn.abort(this.cutoff);
    }
    // The turns first: ending, they may leave work running (then waited for in what time is left).
    const started = Date.now();
    await within(all(), backgroundMs);
    const left = Math.max(0, backgroundMs - (Date.now() - started));
    await within(Promise.all([...this.background]), left);
    return { abandoned: this.open.size + this.background.size };
  }
}

interface OpenTurn {
  abort: (reason: AppError) => void;
  /** Made when a drain first waits for this turn (only a drain waits, so most turns never need one). */
  done?: Promise<void>;
  finished?: () => void;
}

function whenFinished(turn: OpenTurn): Promise<void> {
  turn.done ??= new Promise<void>((resolve) => {
    turn.finished = resolve;
  });
  return turn.done;
}

/** Wait for `work`, at most `ms`. */
async function within(work: Promise<unknown>, ms: number): Promise<"done" | "timeout"> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), ms);
  });
  try {
    return await Promise.race([work.then(() => "done" as const), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
