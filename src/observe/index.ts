import { fanOut, type PaymentEvents } from "../payments/index.js";
import { createMetrics, type Metrics } from "./metrics.js";
import { paymentSpans } from "./payment-spans.js";
import { startTracing, type Tracing } from "./tracing.js";

/**
 * Traces and metrics (docs/deploy.md#traces-and-metrics): OpenTelemetry traces of chat turns, MCP
 * requests, the model's steps and tools, and each payment's phases, exported over OTLP when
 * OTEL_EXPORTER_OTLP_ENDPOINT is set; Prometheus metrics for GET /metrics. Payments are watched
 * through their events port (they never wait on it); the composition root wires the rest.
 */
export type { MetricsSources } from "./metrics.js";
export { type RequestSpan, startRequestSpan } from "./spans.js";
export { SERVICE_NAME, type Tracing, tracingWanted } from "./tracing.js";
export type { Metrics };

export interface Observability {
  tracing: Tracing;
  metrics: Metrics;
  /** What payments tell: the metrics' counters, and spans when tracing is on. */
  paymentEvents: PaymentEvents;
  /** Export the spans ended so far. */
  flush(): Promise<void>;
  /** Export the spans left and stop tracing. */
  shutdown(): Promise<void>;
}

/** Tracing as the environment asks (off without an OTLP endpoint) and a metrics registry of its own. */
export function createObservability(env: Record<string, string | undefined> = process.env): Observability {
  const tracing = startTracing(env);
  const metrics = createMetrics();
  const paymentEvents = tracing.tracer
    ? fanOut(metrics.events, paymentSpans(tracing.tracer))
    : metrics.events;
  return {
    tracing,
    metrics,
    paymentEvents,
    flush: () => tracing.flush(),
    shutdown: () => tracing.shutdown(),
  };
}

/** The ledger's writes, each timed into `x402_ledger_write_seconds{op}`; reads pass through. */
const LEDGER_WRITES = new Set(["reserve", "transition", "recordAwaiting", "approve"]);

export function timedLedger<L extends object>(ledger: L, metrics: Pick<Metrics, "ledgerWrite">): L {
  return new Proxy(ledger, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof property !== "string" || !LEDGER_WRITES.has(property) || typeof value !== "function")
        return value;
      return async (...args: unknown[]) => {
        const started = performance.now();
        try {
          return await value.apply(target, args);
        } finally {
          metrics.ledgerWrite(property, (performance.now() - started) / 1000);
        }
      };
    },
  });
}
