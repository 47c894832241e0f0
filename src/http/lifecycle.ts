import { AppError } from "../errors/index.js";

/**
 * Tracks open chat turns so a shutdown can stop taking new ones, let open streams finish within a
 * grace period, and end the rest with `e:` (shutting_down) then `d:`.
 */
export class Lifecycle {
  private readonly open = new Map<symbol, { abort: (reason: AppError) => void; done: Promise<void> }>();
  private draining = false;

  get isDraining(): boolean {
    return this.draining;
  }

  get openTurns(): number {
    return this.open.size;
  }

  /** Register a turn; returns a function to call when it has finished. */
  track(abort: (reason: AppError) => void): () => void {
    const id = Symbol("turn");
    let finish!: () => void;
    const done = new Promise<void>((resolve) => {
      finish = resolve;
    });
    this.open.set(id, { abort, done });
    return () => {
      this.open.delete(id);
      finish();
    };
  }

  /** Stop accepting turns, wait up to graceMs for open ones, then abort the rest and wait for them to end. */
  async drain(graceMs: number): Promise<void> {
    this.draining = true;
    const all = () => Promise.all([...this.open.values()].map((t) => t.done));
    let timer: ReturnType<typeof setTimeout> | undefined;
    const graceOver = new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), graceMs);
    });
    const outcome = await Promise.race([all().then(() => "done" as const), graceOver]);
    clearTimeout(timer);
    if (outcome === "timeout") {
      const reason = new AppError(
        "shutting_down",
        "The server is shutting down; this stream was ended. Retry shortly.",
      );
      for (const turn of this.open.values()) turn.abort(reason);
      await all();
    }
  }
}
