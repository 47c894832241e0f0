/**
 * Row locks for the in-memory store. Its methods are async and yield between reading and writing
 * (as a database round trip would), so two calls can interleave; where PostgreSQL takes a row lock
 * (a wallet's budget row, a payment row, an idempotency key) the memory store takes the lock of the
 * same name here, and calls on one name run one after the other, in arrival order.
 */
export class Locks {
  private readonly tails = new Map<string, Promise<void>>();

  /** Run `body` holding the locks of `names` (taken in the order given, as the SQL takes its rows). */
  async with<T>(names: readonly string[], body: () => Promise<T>): Promise<T> {
    const [first, ...rest] = names;
    if (first === undefined) return body();
    return this.one(first, () => this.with(rest, body));
  }

  private async one<T>(name: string, body: () => Promise<T>): Promise<T> {
    const before = this.tails.get(name) ?? Promise.resolve();
    let release = () => {};
    const mine = new Promise<void>((resolve) => {
      release = resolve;
    });
    const tail = before.then(() => mine);
    this.tails.set(name, tail);
    await before;
    try {
      return await body();
    } finally {
      release();
      if (this.tails.get(name) === tail) this.tails.delete(name);
    }
  }
}

/**
 * A pause inside a critical section, where a database call would wait on the network: every other
 * pending call runs up to its own lock (or through, if it needs none) before this one goes on. A
 * microtask, not a timer, so tests that fake timers do not stall the store.
 */
export const roundTrip = (): Promise<void> => Promise.resolve();
