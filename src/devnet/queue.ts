/**
 * Runs async tasks one at a time, in submission order. The facilitator submits its own
 * transactions through one of these so two settlements never race for the same nonce.
 */
export class PromiseQueue {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(task: () => Promise<T>): Promise<T> {
    const result = this.tail.then(task, task);
    this.tail = result.catch(() => undefined);
    return result;
  }
}
