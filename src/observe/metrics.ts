import { Counter, Gauge, Histogram, Registry } from "prom-client";
import type { PaymentEvent, PaymentEvents } from "../payments/index.js";
import { isFinal } from "../protocol/index.js";

/**
 * The service's metrics in Prometheus' text format (GET /metrics, docs/deploy.md#traces-and-metrics),
 * on a registry of its own (several services in one process each keep theirs):
 *
 * - `x402_payments_total{status,reason}`: payments that reached a final status (a reconciled one
 *   when the reconciler settles it), and refusals before a payment existed (`status="refused"`);
 *   `reason` is the payment's closed reason, `none` without one;
 * - `x402_spent_usd_total{network,caller}`: USD settled (`caller` is the key's name or AUTH_TOKENS
 *   identity, `jwt` for every JWT's subject, `anonymous`, and `other` past MAX_CALLER_LABELS names,
 *   so a label set stays bounded however many subjects an identity provider has);
 *   a payment the reconciler settles counts on the instance whose reconciler settled it;
 * - `x402_payment_duration_seconds{status}`: from `quoted` to the final status, on the payments' clock;
 * - `x402_ledger_write_seconds{op}`: each ledger write (reserve, transition, recordAwaiting,
 *   approve), timed around the ledger port by the composition root;
 * - gauges read at scrape time: `x402_open_turns`, `x402_unclear_payments` (unknown, signed or
 *   submitted in the ledger), `x402_paused_scopes`.
 */
export interface MetricsSources {
  openTurns?: () => number;
  /** How many payments the ledger holds as unknown, signed or submitted (one cheap read). */
  unclearPayments?: () => Promise<number>;
  /** Pauses in force (the control plane's); absent: 0. */
  pausedScopes?: () => number;
}

export interface Metrics {
  /** The payment events' watcher that moves the payment counters. */
  readonly events: PaymentEvents;
  /** One ledger write took `seconds`. */
  ledgerWrite(op: string, seconds: number): void;
  /** Where the gauges read from, as the parts are wired (later calls add to earlier ones). */
  readFrom(sources: MetricsSources): void;
  readonly contentType: string;
  /** The text exposition of every metric. */
  render(): Promise<string>;
}

/** Payments remembered between `quoted` and their end (for the duration), at most. */
const MAX_TRACKED = 10_000;
/** How many distinct `caller` labels the spend counter takes; later ones count as `other`. */
export const MAX_CALLER_LABELS = 200;

/** The metrics, on `registry`; the gauges read `sources` at scrape time. */
function instruments(registry: Registry, sources: MetricsSources) {
  const payments = new Counter({
    name: "x402_payments_total",
    help: "Payments by final status and reason (refusals before a payment existed count as refused).",
    labelNames: ["status", "reason"] as const,
    registers: [registry],
  });
  // Summed in atomic units and written at scrape time: six $0.01 payments are 0.06, not the
  // 0.060000000000000005 that adding floats makes.
  const settled = new Map<string, { labels: { network: string; caller: string }; atomic: bigint }>();
  const spent = {
    inc(labels: { network: string; caller: string }, atomic: bigint) {
      const key = JSON.stringify([labels.network, labels.caller]);
      const entry = settled.get(key) ?? { labels, atomic: 0n };
      entry.atomic += atomic;
      settled.set(key, entry);
    },
  };
  new Counter({
    name: "x402_spent_usd_total",
    help: "USD settled, by network and caller.",
    labelNames: ["network", "caller"] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const { labels, atomic } of settled.values()) this.inc(labels, usd(atomic));
    },
  });
  const duration = new Histogram({
    name: "x402_payment_duration_seconds",
    help: "Seconds from a payment's quote to its final status.",
    labelNames: ["status"] as const,
    buckets: [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
    registers: [registry],
  });
  const ledger = new Histogram({
    name: "x402_ledger_write_seconds",
    help: "Seconds one ledger write took, by operation.",
    labelNames: ["op"] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  });
  new Gauge({
    name: "x402_open_turns",
    help: "Chat turns open now.",
    registers: [registry],
    collect() {
      this.set(sources.openTurns?.() ?? 0);
    },
  });
  new Gauge({
    name: "x402_unclear_payments",
    help: "Payments awaiting reconciliation (unknown, signed or submitted in the ledger).",
    registers: [registry],
    async collect() {
      // A store that does not answer leaves the gauge unknown rather than failing the scrape.
      this.set(await (sources.unclearPayments?.() ?? Promise.resolve(0)).catch(() => Number.NaN));
    },
  });
  new Gauge({
    name: "x402_paused_scopes",
    help: "Pauses in force (all payments, or one key's).",
    registers: [registry],
    collect() {
      this.set(sources.pausedScopes?.() ?? 0);
    },
  });

  return { payments, spent, duration, ledger };
}

export function createMetrics(): Metrics {
  const registry = new Registry();
  const sources: MetricsSources = {};
  const { payments, spent, duration, ledger } = instruments(registry, sources);
  const quotedAt = new Map<string, Date>();
  const remember = <V>(map: Map<string, V>, id: string, value: V) => {
    if (map.size >= MAX_TRACKED) map.delete(map.keys().next().value ?? "");
    map.set(id, value);
  };
  const callers = new Set<string>();
  /** A bounded label: JWT subjects are one (`jwt`), and past MAX_CALLER_LABELS names, `other`. */
  const callerLabel = (caller: string | null | undefined): string => {
    if (caller === null || caller === undefined) return "anonymous";
    if (caller.startsWith("jwt:")) return "jwt";
    if (callers.has(caller)) return caller;
    if (callers.size >= MAX_CALLER_LABELS) return "other";
    callers.add(caller);
    return caller;
  };
  const final = (status: string, reason: string | undefined) =>
    payments.inc({ status, reason: reason ?? "none" });

  const onStep = (event: Extract<PaymentEvent, { kind: "step" }>) => {
    const p = event.payment;
    if (event.status === "quoted") remember(quotedAt, p.paymentId, event.at);
    if (!isFinal(event.status)) return;
    final(event.status, event.reason);
    if (event.status === "settled") {
      spent.inc({ network: p.network, caller: callerLabel(p.caller) }, p.amount);
    }
    const since = quotedAt.get(p.paymentId);
    if (since) {
      duration.observe({ status: event.status }, (event.at.getTime() - since.getTime()) / 1000);
      quotedAt.delete(p.paymentId);
    }
  };

  const onReconciled = (event: Extract<PaymentEvent, { kind: "reconciled" }>) => {
    final(event.to, undefined);
    // The row's own facts: a payment another instance sent (and saw go unknown) counts here once.
    const p = event.payment;
    if (event.to === "settled") spent.inc({ network: p.network, caller: callerLabel(p.caller) }, p.amount);
  };

  return {
    events: {
      emit(event) {
        if (event.kind === "step") onStep(event);
        else if (event.kind === "refused_early") final("refused", event.reason);
        else if (event.kind === "reconciled" && isFinal(event.to)) onReconciled(event);
      },
    },
    ledgerWrite: (op, seconds) => ledger.observe({ op }, seconds),
    readFrom(more) {
      Object.assign(sources, more);
    },
    contentType: registry.contentType,
    // prom-client writes NaN as `Nan`; the exposition formats spell it `NaN`.
    render: async () => (await registry.metrics()).replace(/ Nan$/gm, " NaN"),
  };
}

/** Atomic USD units (6 decimals) as a number of dollars, for a counter (exact below 2^53 units). */
function usd(atomic: bigint): number {
  return Number(atomic) / 1_000_000;
}
