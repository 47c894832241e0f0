/**
 * docs/deploy.md#traces-and-metrics: payment events through the port become one `payment` span
 * per payment (a child of the span active when it was quoted) with a span per phase, and move the
 * Prometheus counters; tracing is off without an OTLP endpoint; a log line written inside a span
 * names its trace.
 */
import { context, type Span, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import {
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
  TracerProvider,
} from "@opentelemetry/sdk-trace";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../log/index.js";
import type { PaymentEvent, PaymentFactsSeen } from "../payments/index.js";
import type { PaymentStatus } from "../protocol/index.js";
import { timedLedger } from "./index.js";
import { createMetrics, MAX_CALLER_LABELS } from "./metrics.js";
import { paymentSpans } from "./payment-spans.js";
import { tracingWanted } from "./tracing.js";

const exporter = new InMemorySpanExporter();
const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
const tracer = provider.getTracer("test");

beforeAll(() => {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
});
afterEach(() => exporter.reset());

const facts = (paymentId: string, over: Partial<PaymentFactsSeen> = {}): PaymentFactsSeen => ({
  paymentId,
  scopeId: "req-1",
  caller: "alice",
  wallet: "0x0000000000000000000000000000000000000001",
  service: "https://weather.example:8443/paris?units=c",
  network: "eip155:84532",
  asset: "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
  payTo: "0x0000000000000000000000000000000000000002",
  amount: 10_000n,
  ...over,
});

let clock = Date.parse("2026-01-01T00:00:00Z");
const step = (
  payment: PaymentFactsSeen,
  status: PaymentStatus,
  extra: Partial<PaymentEvent> = {},
): PaymentEvent => {
  clock += 100;
  return { kind: "step", at: new Date(clock), payment, status, ...extra } as PaymentEvent;
};

const byName = (spans: ReadableSpan[], name: string) => spans.filter((s) => s.name === name);
const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;

/** Run `fn` inside a parent span (as a chat turn's payments are emitted). */
function insideTurn(fn: () => void): Span {
  const turn = tracer.startSpan("chat.turn");
  context.with(trace.setSpan(context.active(), turn), fn);
  turn.end();
  return turn;
}

describe("payment spans", () => {
  it("a settled payment: one span under the turn, a span per phase under it, its spend attributes", () => {
    const watcher = paymentSpans(tracer);
    const p = facts("pay-1");
    const turn = insideTurn(() => {
      for (const status of ["quoted", "reserved", "signed", "submitted", "settled"] as const)
        watcher.emit(step(p, status, status === "settled" ? { txHash: "0xabc" } : {}));
    });
    const spans = exporter.getFinishedSpans();
    const [payment, ...more] = byName(spans, "payment");
    expect(more).toHaveLength(0);
    expect(payment?.spanContext().traceId).toBe(turn.spanContext().traceId);
    expect(parentOf(payment as ReadableSpan)).toBe(turn.spanContext().spanId);
    expect(payment?.attributes).toMatchObject({
      "payment.id": "pay-1",
      "payment.amount_usd": "0.01",
      "payment.asset": p.asset,
      "payment.network": "eip155:84532",
      "payment.payee_host": "weather.example:8443",
      "payment.status": "settled",
      "payment.tx_hash": "0xabc",
      caller: "alice",
    });
    const phases = spans.filter((s) => parentOf(s) === payment?.spanContext().spanId).map((s) => s.name);
    expect(phases).toEqual(["payment.reserve", "payment.sign", "payment.submit", "payment.settle"]);
  });

  it("a refused payment: its admission phase and the refusal reason, marked as an error", () => {
    const watcher = paymentSpans(tracer);
    const p = facts("pay-2", { caller: null });
    insideTurn(() => {
      watcher.emit(step(p, "quoted"));
      watcher.emit(step(p, "refused", { reason: "limit_exceeded" }));
    });
    const [payment] = byName(exporter.getFinishedSpans(), "payment");
    expect(payment?.attributes).toMatchObject({
      "payment.status": "refused",
      "payment.refusal_reason": "limit_exceeded",
      caller: "anonymous",
    });
    expect(payment?.status.code).toBe(2); // ERROR
    const [admission] = byName(exporter.getFinishedSpans(), "payment.admission");
    expect(parentOf(admission as ReadableSpan)).toBe(payment?.spanContext().spanId);
  });

  it("an approval: the wallet's wait ends the first span; taken up later, a new span in that request", () => {
    const watcher = paymentSpans(tracer);
    const p = facts("pay-3");
    const first = insideTurn(() => {
      watcher.emit(step(p, "quoted"));
      watcher.emit(step(p, "awaiting_approval"));
    });
    const second = insideTurn(() => {
      for (const status of ["reserved", "signed", "submitted", "settled"] as const)
        watcher.emit(step(p, status));
    });
    const payments = byName(exporter.getFinishedSpans(), "payment");
    expect(payments.map((s) => s.attributes["payment.status"])).toEqual(["awaiting_approval", "settled"]);
    expect(payments.map((s) => s.spanContext().traceId)).toEqual([
      first.spanContext().traceId,
      second.spanContext().traceId,
    ]);
    expect(payments[1]?.attributes["payment.first_status"]).toBe("reserved");
  });

  it("reconciliation and early refusals are spans of their own", () => {
    const watcher = paymentSpans(tracer);
    const payment = { network: "eip155:84532", amount: 10_000n, caller: "bob", scopeId: "req-4" };
    watcher.emit({
      kind: "reconciled",
      at: new Date(),
      paymentId: "pay-4",
      from: "unknown",
      to: "settled",
      payment,
    });
    watcher.emit({
      kind: "refused_early",
      at: new Date(),
      scopeId: "req-2",
      caller: "bob",
      service: "https://x.example/a",
      reason: "origin_not_allowed",
      message: "not on the allow-list",
    });
    const spans = exporter.getFinishedSpans();
    expect(byName(spans, "payment.reconcile")[0]?.attributes).toMatchObject({
      "payment.id": "pay-4",
      "payment.from": "unknown",
      "payment.status": "settled",
    });
    expect(byName(spans, "payment.refused")[0]?.attributes).toMatchObject({
      "payment.refusal_reason": "origin_not_allowed",
      "payment.payee_host": "x.example",
      caller: "bob",
    });
  });
});

/** The value of one sample line (`name{labels} value`) in Prometheus' text, or undefined. */
function sample(text: string, line: string): number | undefined {
  const found = text.split("\n").find((l) => l.startsWith(`${line} `));
  return found === undefined ? undefined : Number(found.slice(line.length + 1));
}

describe("metrics", () => {
  it("count payments by status and reason, spend by network and caller, and the quote-to-end time", async () => {
    const metrics = createMetrics();
    const p = facts("m-1");
    for (const status of ["quoted", "reserved", "signed", "submitted", "settled"] as const)
      metrics.events.emit(step(p, status));
    const q = facts("m-2", { caller: null, amount: 2_500_000n });
    metrics.events.emit(step(q, "quoted"));
    metrics.events.emit(step(q, "refused", { reason: "limit_exceeded" }));
    metrics.events.emit({
      kind: "refused_early",
      at: new Date(),
      scopeId: "s",
      caller: null,
      reason: "origin_not_allowed",
      message: "no",
    });
    const text = await metrics.render();
    expect(sample(text, 'x402_payments_total{status="settled",reason="none"}')).toBe(1);
    expect(sample(text, 'x402_payments_total{status="refused",reason="limit_exceeded"}')).toBe(1);
    expect(sample(text, 'x402_payments_total{status="refused",reason="origin_not_allowed"}')).toBe(1);
    expect(sample(text, 'x402_spent_usd_total{network="eip155:84532",caller="alice"}')).toBe(0.01);
    expect(text).not.toContain('caller="anonymous"} ');
    expect(sample(text, 'x402_payment_duration_seconds_count{status="settled"}')).toBe(1);
    expect(sample(text, 'x402_payment_duration_seconds_sum{status="settled"}')).toBeCloseTo(0.4);
    expect(metrics.contentType).toMatch(/^text\/plain/);
  });

  it("the caller label stays bounded: JWT subjects are one label, names past the cap are `other`", async () => {
    const metrics = createMetrics();
    const settle = (caller: string) => {
      const p = facts(`c-${caller}`, { caller });
      for (const status of ["quoted", "reserved", "signed", "submitted", "settled"] as const)
        metrics.events.emit(step(p, status));
    };
    for (let i = 0; i < 50; i++) settle(`jwt:user-${i}`);
    for (let i = 0; i < MAX_CALLER_LABELS + 5; i++) settle(`key-${i}`);
    settle("key-0");
    const text = await metrics.render();
    // Summed in atomic units: fifty $0.01 payments are exactly 0.5.
    const callers = text.split("\n").filter((l) => l.startsWith("x402_spent_usd_total{"));
    expect(callers).toHaveLength(MAX_CALLER_LABELS + 2);
    expect(text).not.toContain("user-");
    expect(sample(text, 'x402_spent_usd_total{network="eip155:84532",caller="jwt"}')).toBe(0.5);
    expect(sample(text, 'x402_spent_usd_total{network="eip155:84532",caller="key-0"}')).toBe(0.02);
    expect(sample(text, 'x402_spent_usd_total{network="eip155:84532",caller="other"}')).toBe(0.05);
  });

  it("a payment left unknown counts as spent when the reconciler settles it", async () => {
    const metrics = createMetrics();
    const p = facts("m-3", { amount: 1_230_000n, network: "solana:devnet" });
    for (const status of ["quoted", "reserved", "signed", "submitted", "unknown"] as const)
      metrics.events.emit(step(p, status));
    let text = await metrics.render();
    expect(sample(text, 'x402_spent_usd_total{network="solana:devnet",caller="alice"}')).toBeUndefined();
    metrics.events.emit({
      kind: "reconciled",
      at: new Date(),
      paymentId: "m-3",
      from: "unknown",
      to: "settled",
      payment: { network: p.network, amount: p.amount, caller: p.caller, scopeId: p.scopeId },
    });
    text = await metrics.render();
    expect(sample(text, 'x402_spent_usd_total{network="solana:devnet",caller="alice"}')).toBe(1.23);
    expect(sample(text, 'x402_payments_total{status="settled",reason="none"}')).toBe(1);
  });

  // Found by a black-box run: after a kill -9, the payments another instance had sent were settled
  // by this one's reconciler and counted settled, but in no instance's spent total.
  it("a payment another instance sent counts as spent where the reconciler settles it, once", async () => {
    const metrics = createMetrics();
    const payment = { network: "eip155:84532", amount: 20_000n, caller: "ci", scopeId: "req-9" };
    metrics.events.emit({
      kind: "reconciled",
      at: new Date(),
      paymentId: "m-9",
      from: "submitted",
      to: "settled",
      payment,
    });
    const text = await metrics.render();
    expect(sample(text, 'x402_spent_usd_total{network="eip155:84532",caller="ci"}')).toBe(0.02);
  });

  it("gauges read their sources at scrape time; a store that fails leaves the unclear gauge NaN", async () => {
    const metrics = createMetrics();
    let open = 2;
    metrics.readFrom({ openTurns: () => open, unclearPayments: async () => 3 });
    metrics.readFrom({ pausedScopes: () => 1 });
    let text = await metrics.render();
    expect(sample(text, "x402_open_turns")).toBe(2);
    expect(sample(text, "x402_unclear_payments")).toBe(3);
    expect(sample(text, "x402_paused_scopes")).toBe(1);
    open = 0;
    metrics.readFrom({ unclearPayments: () => Promise.reject(new Error("store down")) });
    text = await metrics.render();
    expect(sample(text, "x402_open_turns")).toBe(0);
    expect(sample(text, "x402_unclear_payments")).toBeNaN();
    expect(text).toMatch(/^x402_unclear_payments NaN$/m); // as the exposition formats spell it
  });

  it("timedLedger times the ledger's writes, not its reads, and keeps their results and errors", async () => {
    const metrics = createMetrics();
    const ledger = {
      rows: 0,
      async transition() {
        this.rows++;
      },
      async reserve() {
        throw new Error("limit");
      },
      async get() {
        return this.rows;
      },
    };
    const timed = timedLedger(ledger, metrics);
    await timed.transition();
    await expect(timed.reserve()).rejects.toThrow("limit");
    expect(await timed.get()).toBe(1);
    const text = await metrics.render();
    expect(sample(text, 'x402_ledger_write_seconds_count{op="transition"}')).toBe(1);
    expect(sample(text, 'x402_ledger_write_seconds_count{op="reserve"}')).toBe(1);
    expect(text).not.toContain('op="get"');
  });
});

describe("tracing switch and log lines", () => {
  it("is on only with an OTLP endpoint, and not when the SDK or the traces exporter is turned off", () => {
    expect(tracingWanted({})).toBe(false);
    expect(tracingWanted({ OTEL_EXPORTER_OTLP_ENDPOINT: "" })).toBe(false);
    expect(tracingWanted({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318" })).toBe(true);
    expect(tracingWanted({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://127.0.0.1:4318/v1/traces" })).toBe(
      true,
    );
    const on = { OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318" };
    expect(tracingWanted({ ...on, OTEL_SDK_DISABLED: "true" })).toBe(false);
    expect(tracingWanted({ ...on, OTEL_TRACES_EXPORTER: "none" })).toBe(false);
  });

  it("a log line written inside a span carries its trace and span ids; outside, none", () => {
    const lines: string[] = [];
    const logger = createLogger({ destination: { write: (line: string) => lines.push(line) } });
    logger.info("outside");
    const span = tracer.startSpan("work");
    context.with(trace.setSpan(context.active(), span), () => logger.info("inside"));
    span.end();
    const [outside, inside] = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(outside).not.toHaveProperty("trace_id");
    expect(inside).toMatchObject({
      trace_id: span.spanContext().traceId,
      span_id: span.spanContext().spanId,
    });
  });
});
