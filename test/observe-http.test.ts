/**
 * docs/deploy.md#traces-and-metrics at the HTTP edge: GET /metrics exists only when METRICS_TOKEN
 * is set and answers only that token (401 problem+json otherwise, the API's tokens included); a
 * chat turn is one `chat.turn` span that ends once its stream has been read, with the AI SDK's
 * spans of the model's steps beneath; without tracing no span is made.
 */

import { OpenTelemetry } from "@ai-sdk/otel";
import { context } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from "@opentelemetry/sdk-trace";
import { beforeAll, describe, expect, it } from "vitest";
import { createObservability, type Observability } from "../src/observe/index.js";
import { createMetrics } from "../src/observe/metrics.js";
import { buildService, chatRequest, readEvents, USER_HI } from "./helpers.js";

const METRICS_TOKEN = "metrics-token-0123456789";
const API_TOKEN = "api-token-0123456789abcdef";

beforeAll(() => {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
});

/** Observability as the composition root makes it, with spans kept in memory. */
function inMemory(): { observe: Observability; exporter: InMemorySpanExporter } {
  const exporter = new InMemorySpanExporter();
  const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
  const tracer = provider.getTracer("test");
  const metrics = createMetrics();
  const observe: Observability = {
    tracing: {
      tracer,
      aiTelemetry: { recordInputs: false, recordOutputs: false, integrations: new OpenTelemetry({ tracer }) },
      flush: () => provider.forceFlush(),
      shutdown: () => provider.shutdown(),
    },
    metrics,
    paymentEvents: metrics.events,
    flush: () => provider.forceFlush(),
    shutdown: () => provider.shutdown(),
  };
  return { observe, exporter };
}

describe("GET /metrics", () => {
  it("is not mounted without METRICS_TOKEN", async () => {
    const service = buildService({}, { observe: createObservability({}) });
    const response = await service.app.request("/metrics", {
      headers: { Authorization: `Bearer ${METRICS_TOKEN}` },
    });
    expect(response.status).toBe(404);
  });

  it("answers METRICS_TOKEN only: a missing, wrong or API token gets 401 problem+json", async () => {
    const service = buildService(
      { METRICS_TOKEN, AUTH_TOKENS: `alice=${API_TOKEN}` },
      { observe: createObservability({}) },
    );
    const refused: Record<string, string>[] = [
      {},
      { Authorization: "Bearer wrong-token-0123456789" },
      { Authorization: `Bearer ${API_TOKEN}` },
    ];
    for (const headers of refused) {
      const response = await service.app.request("/metrics", { headers });
      expect(response.status).toBe(401);
      expect(response.headers.get("content-type")).toMatch(/^application\/problem\+json/);
      expect(await response.json()).toMatchObject({ code: "unauthorized" });
    }
    const response = await service.app.request("/metrics", {
      headers: { Authorization: `Bearer ${METRICS_TOKEN}` },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await response.text();
    for (const name of [
      "x402_payments_total",
      "x402_spent_usd_total",
      "x402_payment_duration_seconds",
      "x402_ledger_write_seconds",
    ])
      expect(text).toContain(`# TYPE ${name} `);
    expect(text).toContain("\nx402_open_turns 0\n");
    expect(text).toContain("\nx402_paused_scopes 0\n");
  });

  it("refuses a short METRICS_TOKEN at start", () => {
    expect(() => buildService({ METRICS_TOKEN: "short" })).toThrow(/METRICS_TOKEN: at least 16 characters/);
  });
});

describe("request spans", () => {
  it("a chat turn is one span, ended with its stream, with the model's spans beneath", async () => {
    const { observe, exporter } = inMemory();
    const service = buildService({ AUTH_TOKENS: `alice=${API_TOKEN}` }, { observe });
    const response = await service.app.request(
      "/api/chat",
      chatRequest(USER_HI, { Authorization: `Bearer ${API_TOKEN}` }),
    );
    expect(exporter.getFinishedSpans().filter((s) => s.name === "chat.turn")).toHaveLength(0);
    await readEvents(response);
    const spans = exporter.getFinishedSpans();
    const turns = spans.filter((s) => s.name === "chat.turn");
    expect(turns).toHaveLength(1);
    const turn = turns[0];
    expect(turn?.attributes).toMatchObject({
      caller: "alice",
      "http.route": "/api/chat",
      "http.response.status_code": 200,
      "request.id": response.headers.get("x-request-id"),
    });
    const beneath = spans.filter(
      (s) => s !== turn && s.spanContext().traceId === turn?.spanContext().traceId,
    );
    expect(beneath.some((s) => s.parentSpanContext?.spanId === turn?.spanContext().spanId)).toBe(true);
    expect(beneath.length).toBeGreaterThanOrEqual(2);
    // Inputs and outputs are not recorded: no prompt text in any attribute.
    expect(JSON.stringify(spans.map((s) => s.attributes))).not.toContain("Hello there");
  });

  it("a refused request's span carries its status", async () => {
    const { observe, exporter } = inMemory();
    const service = buildService({ AUTH_TOKENS: `alice=${API_TOKEN}`, REQUIRE_AUTH: "true" }, { observe });
    const response = await service.app.request("/api/chat", chatRequest(USER_HI));
    expect(response.status).toBe(401);
    await response.text();
    const [turn] = exporter.getFinishedSpans().filter((s) => s.name === "chat.turn");
    expect(turn?.attributes).toMatchObject({ "http.response.status_code": 401, caller: "anonymous" });
  });

  it("without an OTLP endpoint nothing is traced: no tracer, no AI SDK telemetry, turns run as before", async () => {
    const observe = createObservability({ OTEL_SERVICE_NAME: "x" });
    expect(observe.tracing.tracer).toBeUndefined();
    expect(observe.tracing.aiTelemetry).toBeUndefined();
    const service = buildService({}, { observe });
    const response = await service.app.request("/api/chat", chatRequest(USER_HI));
    const events = await readEvents(response);
    expect(events.at(-1)).toMatchObject({ type: "finish" });
  });
});
