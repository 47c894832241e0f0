/**
 * Answers to the URL elicitations of waiting `pay_quote` calls, as they reach this process.
 * Over stateless HTTP a client's answer comes on a later POST, to a fresh server that did not ask:
 * that request hands the answer here, keyed by the caller and the MCP session, and a call of the
 * same session waiting in this process hears it (a decline ends its wait at once). On another
 * instance nobody hears it, and the call waits for the payment to end or expire, as before.
 */
export type AnswerListener = (action: string) => void;

export class ElicitationAnswers {
  private readonly waiting = new Map<string, Set<AnswerListener>>();

  /** Listen for the answers of one session; returns the function that stops listening. */
  listen(key: string, listener: AnswerListener): () => void {
    let listeners = this.waiting.get(key);
    if (!listeners) {
      listeners = new Set();
      this.waiting.set(key, listeners);
    }
    listeners.add(listener);
    return () => {
      listeners.delete(listener);
      if (listeners.size === 0) this.waiting.delete(key);
    };
  }

  /**
   * An answer (`accept`, `decline`, `cancel`) arrived for this session. It names no call (each
   * POST's fresh server numbers its elicitations alike), so it goes to the one call waiting; with
   * several waiting, none hears it, and each waits for its payment to end, as on another instance.
   */
  deliver(key: string, action: string): void {
    const listeners = this.waiting.get(key);
    if (listeners?.size !== 1) return;
    for (const listener of listeners) listener(action);
  }
}

/**
 * The tool calls running in this process, by caller, MCP session and JSON-RPC id, so that a
 * `notifications/cancelled` (which over stateless HTTP comes on a later POST, to a fresh server
 * that never saw the call) aborts the call it names: a payment not yet reserved then starts no
 * more, and an approval's wait ends. A call on another instance does not hear it.
 */
export class RunningCalls {
  private readonly running = new Map<string, AbortController>();

  /** A call starts: its signal aborts when it is cancelled; `done` forgets it. */
  start(key: string): { signal: AbortSignal; done: () => void } {
    const controller = new AbortController();
    this.running.set(key, controller);
    return {
      signal: controller.signal,
      done: () => {
        if (this.running.get(key) === controller) this.running.delete(key);
      },
    };
  }

  /** The client cancelled the call `key` names (if it runs here). */
  cancel(key: string): void {
    this.running.get(key)?.abort(new Error("the client cancelled the call"));
  }

  get size(): number {
    return this.running.size;
  }
}
