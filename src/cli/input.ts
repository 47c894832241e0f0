import type { Interface } from "node:readline";
import { Interrupted } from "./session.js";

/** What the person types at the terminal chat: lines (questions and approval answers), and Ctrl-C. */

/** Lines typed by the person, read one at a time (questions and approval answers share them). */
export class Lines {
  private readonly queue: string[] = [];
  private waiter: ((line: string | undefined) => void) | undefined;
  private closed = false;

  constructor(
    readonly rl: Interface,
    private readonly promptOut: (text: string) => void,
  ) {
    rl.on("line", (line) => {
      if (this.waiter) {
        const w = this.waiter;
        this.waiter = undefined;
        w(line);
      } else this.queue.push(line);
    });
    rl.on("close", () => {
      this.closed = true;
      this.waiter?.(undefined);
      this.waiter = undefined;
    });
  }

  /** Give up waiting: the pending `next` resolves to undefined (Ctrl-C at a question). */
  cancel(): void {
    const w = this.waiter;
    this.waiter = undefined;
    w?.(undefined);
  }

  /**
   * The answer to a question about money (approve and sign?): at a terminal, a line typed after
   * `prompt` was shown, never one typed or pasted ahead of it ("question⏎yes" must not say yes
   * unasked); lines typed ahead stay queued, after the answer, for the chat. Input from a pipe is a
   * script whose answers are written in order: read as it comes.
   */
  async answer(prompt: string): Promise<string | undefined> {
    if (!this.rl.terminal) return this.next(prompt);
    const ahead = this.queue.splice(0);
    try {
      return await this.next(prompt);
    } finally {
      this.queue.unshift(...ahead);
    }
  }

  /** The next line, after showing `prompt`; undefined at the end of input. */
  next(prompt: string): Promise<string | undefined> {
    const queued = this.queue.shift();
    if (queued !== undefined) return Promise.resolve(queued);
    if (this.closed) return Promise.resolve(undefined);
    if (this.rl.terminal) {
      this.rl.setPrompt(prompt);
      this.rl.prompt();
    } else this.promptOut(prompt);
    return new Promise((resolve) => {
      this.waiter = resolve;
    });
  }
}

/**
 * Ctrl-C stops the answer being written (and a question it asks), so the chat goes on; between
 * answers it quits.
 */
export class Interrupts {
  private current: AbortController | undefined;
  /** Ctrl-C came between answers: the chat ends as interrupted. */
  quit = false;

  constructor(
    private readonly lines: Lines | undefined,
    private readonly rl: Interface | undefined,
  ) {}

  readonly interrupt = (): void => {
    if (this.current) {
      this.current.abort(new Interrupted("interrupted"));
      this.lines?.cancel();
    } else {
      this.quit = true;
      this.rl?.close();
    }
  };

  /** An answer starts: Ctrl-C now aborts its signal. */
  begin(): AbortSignal {
    this.current = new AbortController();
    return this.current.signal;
  }

  /** The answer ended: Ctrl-C quits again. */
  end(): void {
    this.current = undefined;
  }
}
