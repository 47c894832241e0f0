/**
 * The last line of `npm run bench -- --only=baseline` (docs/benchmarks.md#scale-baseline): three
 * ratios against bare `@x402/fetch` clients, all from one run on one devnet.
 */
export interface ScaleFigures {
  /** Bare clients' successful payments per second at the run's concurrency. */
  bareRate: number;
  /** Paid chats per second through one instance, same concurrency. */
  oneRate: number;
  /** Paid chats per second spread over two instances, same concurrency. */
  twoRate: number;
  /** p50 ms of one payment through the service's pipeline, sequential. */
  pipelineP50: number;
  /** p50 ms of one payment by the bare client, sequential, alternating with the pipeline. */
  directP50: number;
}

/** `a / b` as `1.23x`; "-" when it cannot be measured (no successes, no time). */
export function times(a: number, b: number): string {
  const r = a / b;
  return Number.isFinite(r) && r >= 0 && b > 0 ? `${r.toFixed(2)}x` : "-";
}

export function scaleLine(f: ScaleFigures): string {
  return `scale: one instance ${times(f.oneRate, f.bareRate)} bare, two instances ${times(f.twoRate, f.bareRate)} bare, paid path ${times(f.pipelineP50, f.directP50)} bare`;
}
