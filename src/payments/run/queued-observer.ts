import type { PaymentObserver } from "../rules/index.js";

/** Queues a run's updates until the turn's stream exists (the checks run before it opens). */
export class QueuedObserver implements PaymentObserver {
  private target: PaymentObserver | undefined;
  private readonly queue: Array<(o: PaymentObserver) => void> = [];
  update: PaymentObserver["update"] = (u) => this.send((o) => o.update(u));
  summary: PaymentObserver["summary"] = (s) => this.send((o) => o.summary(s));
  error: PaymentObserver["error"] = (e) => this.send((o) => o.error(e));
  attach(observer: PaymentObserver): void {
    this.target = observer;
    for (const send of this.queue.splice(0)) send(observer);
  }
  private send(call: (o: PaymentObserver) => void): void {
    if (this.target) call(this.target);
    else this.queue.push(call);
  }
}
