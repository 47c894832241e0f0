import type { TextStreamPart, ToolSet } from "ai";

/**
 * The cutoff (the deadline, a shutdown) ends a turn at once, even while a step still waits on a
 * tool or on the model: what the turn awaits must give way to it.
 */

/** The work's result, or undefined as soon as `cutoff` aborts first. */
export async function untilCutoff<T>(
  work: Promise<T>,
  cutoff: AbortSignal | undefined,
): Promise<T | undefined> {
  if (!cutoff) return work;
  if (cutoff.aborted) return undefined;
  let onAbort = () => {};
  const aborted = new Promise<undefined>((resolve) => {
    onAbort = () => resolve(undefined);
    cutoff.addEventListener("abort", onAbort, { once: true });
  });
  try {
    return await Promise.race([work, aborted]);
  } finally {
    cutoff.removeEventListener("abort", onAbort);
  }
}

type Part = TextStreamPart<ToolSet>;

/**
 * Reads the model's stream until it ends or the cutoff comes: releasing the reader rejects its
 * pending read at once, so the loop ends even while a step is waiting. Dispose of it when done.
 */
export class CutoffReader {
  private cutNow = false;
  private parts: ReadableStream<Part> | undefined;
  private reader: ReadableStreamDefaultReader<Part> | undefined;
  private readonly onCutoff = () => {
    this.cutNow = true;
    if (!this.reader) return;
    this.reader.releaseLock();
    this.parts?.cancel().catch(() => {});
  };

  constructor(private readonly cutoff: AbortSignal | undefined) {
    if (cutoff?.aborted) this.cutNow = true;
    else cutoff?.addEventListener("abort", this.onCutoff, { once: true });
  }

  /** Whether the turn is cut off: the cutoff came, or `cut()` was called. */
  get isCut(): boolean {
    return this.cutNow;
  }

  /** Cut off without the signal (work the turn leaves to the background). */
  cut(): void {
    this.cutNow = true;
  }

  /** Read `parts` from now on (released at once if the turn is already cut off). */
  read(parts: ReadableStream<Part>): void {
    this.parts = parts;
    this.reader = parts.getReader();
    if (this.cutNow) this.onCutoff();
  }

  /** The next part, or undefined when the stream ended or the cutoff released it. */
  async next(): Promise<Part | undefined> {
    if (!this.reader) throw new Error("CutoffReader: nothing to read");
    let next: ReadableStreamReadResult<Part>;
    try {
      next = await this.reader.read();
    } catch (error) {
      if (this.cutNow) return undefined;
      throw error;
    }
    return next.done ? undefined : next.value;
  }

  dispose(): void {
    this.cutoff?.removeEventListener("abort", this.onCutoff);
  }
}
