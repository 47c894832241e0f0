/**
 * docs/deploy.md#traces-and-metrics, for real: with OTEL_EXPORTER_OTLP_ENDPOINT pointing at a local
 * OTLP/HTTP receiver (a node:http server collecting the JSON bodies), a paid devnet turn arrives
 * there as one trace: the turn's span, the AI SDK's spans of the model's steps and tools, and the
 * payment's span with its phases and spend attributes beneath. GET /metrics (behind METRICS_TOKEN)
 * after real paid turns shows the settled payments and the amount spent.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { walletAddress } from "../../src/devnet/testing/index.js";
import { type Booted, boot, chat, sidecarServer, useTestDevnet } from "./harness.js";

const devnet = useTestDevnet();
const METRICS_TOKEN = "metrics-token-0123456789";

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes?: { key: string; value: OtlpValue }[];
}
interface OtlpBody {
  resourceSpans?: {
    resource?: { attributes?: { key: string; value: OtlpValue }[] };
    scopeSpans?: { spans?: OtlpSpan[] }[];
  }[];
}

/** A local OTLP/HTTP receiver: every JSON body POSTed to /v1/traces. */
async function otlpReceiver(): Promise<{ url: string; bodies: OtlpBody[]; close(): Promise<void> }> {
  const bodies: OtlpBody[] = [];
  const server = await sidecarServer(({ method, url, body }) => {
    if (method === "POST" && url === "/v1/traces") bodies.push(JSON.parse(body) as OtlpBody);
    return undefined;
  });
  return { ...server, bodies };
}

const attr = (span: OtlpSpan | undefined, key: string): string | number | boolean | undefined => {
  const value = span?.attributes?.find((a) => a.key === key)?.value;
  if (!value) return undefined;
  if (value.intValue !== undefined) return Number(value.intValue);
  return value.stringValue ?? value.doubleValue ?? value.boolValue;
};

/** One sample's value in Prometheus' text (`name{labels} value`), or undefined. */
function sample(text: string, line: string): number | undefined {
  const found = text.split("\n").find((l) => l.startsWith(`${line} `));
  return found === undefined ? undefined : Number(found.slice(line.length + 1));
}

describe("traces and metrics of paid turns", () => {
  let booted: Booted;
  let receiver: Awaited<ReturnType<typeof otlpReceiver>>;

  beforeAll(async () => {
    receiver = await otlpReceiver();
    // The standard variable, read by the SDK itself (as in production).
    vi.stubEnv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.url);
    vi.stubEnv("OTEL_SERVICE_NAME", "x402-observe-test");
    booted = await boot(devnet, { store: "pglite", env: { METRICS_TOKEN } });
  });
  afterAll(async () => {
    await booted?.close();
    vi.unstubAllEnvs();
    await receiver?.close();
  });

  it("a paid turn is one trace with the payment's spans, and moves /metrics' counters", async () => {
    const { app } = booted.running.service;
    const token = devnet.manifest.devToken;
    const scrape = async () => {
      const response = await app.request("/metrics", {
        headers: { Authorization: `Bearer ${METRICS_TOKEN}` },
      });
      expect(response.status).toBe(200);
      return response.text();
    };
    const before = await scrape();
    const settled = 'x402_payments_total{status="settled",reason="none"}';
    const spent = `x402_spent_usd_total{network="${devnet.manifest.evm.network}",caller="devnet"}`;

    const results = [];
    for (let i = 0; i < 2; i++)
      results.push(await chat(booted.running, { wallet: walletAddress(devnet, "evm", "payer"), token }));
    for (const result of results) expect(result.finish.finishReason).toBe("payment-complete");
    await booted.running.service.lifecycle.idle();

    const after = await scrape();
    expect((sample(after, settled) ?? 0) - (sample(before, settled) ?? 0)).toBe(2);
    expect((sample(after, spent) ?? 0) - (sample(before, spent) ?? 0)).toBeCloseTo(0.02, 6);
    expect(sample(after, 'x402_payment_duration_seconds_count{status="settled"}')).toBeGreaterThanOrEqual(2);
    expect(sample(after, 'x402_ledger_write_seconds_count{op="reserve"}')).toBeGreaterThanOrEqual(2);
    expect(sample(after, "x402_open_turns")).toBe(0);
    expect(sample(after, "x402_unclear_payments")).toBe(0);

    // An MCP request is a span of its own.
    const mcp = await app.request("/mcp", {
      method: "POST",
      headers: {
        "Content-Type": "application/json",
        Accept: "application/json, text/event-stream",
        Authorization: `Bearer ${token}`,
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: {
          protocolVersion: "2025-06-18",
          capabilities: {},
          clientInfo: { name: "test", version: "1" },
        },
      }),
    });
    expect(mcp.status).toBe(200);
    await mcp.text();

    // Shutting the service down flushes the batch of spans to the receiver.
    await booted.close();
    const spans = receiver.bodies.flatMap((b) =>
      (b.resourceSpans ?? []).flatMap((r) => (r.scopeSpans ?? []).flatMap((s) => s.spans ?? [])),
    );
    const resource = receiver.bodies[0]?.resourceSpans?.[0]?.resource?.attributes ?? [];
    expect(resource.find((a) => a.key === "service.name")?.value.stringValue).toBe("x402-observe-test");

    const [mcpSpan, ...moreMcp] = spans.filter((s) => s.name === "mcp.request");
    expect(moreMcp).toHaveLength(0);
    expect(attr(mcpSpan, "caller")).toBe("devnet");
    expect(attr(mcpSpan, "http.response.status_code")).toBe(200);

    const turns = spans.filter((s) => s.name === "chat.turn");
    expect(turns).toHaveLength(2);
    for (const [i, turn] of turns.entries()) {
      const inTrace = spans.filter((s) => s.traceId === turn.traceId);
      expect(attr(turn, "caller")).toBe("devnet");
      expect(attr(turn, "http.response.status_code")).toBe(200);
      expect(attr(turn, "request.id")).toBe(results[i]?.requestId);
      // The AI SDK's own spans: the model's steps and the tools it called.
      expect(inTrace.some((s) => /invoke_agent|step|chat/.test(s.name) && s.spanId !== turn.spanId)).toBe(
        true,
      );
      const tools = inTrace.filter((s) => /execute_tool/.test(s.name));
      expect(tools.length).toBeGreaterThanOrEqual(3);

      const payments = inTrace.filter((s) => s.name === "payment");
      expect(payments).toHaveLength(1);
      const payment = payments[0];
      const paymentId = results[i]?.payments.at(-1)?.paymentId;
      expect(attr(payment, "payment.id")).toBe(paymentId);
      expect(attr(payment, "payment.status")).toBe("settled");
      expect(attr(payment, "payment.amount_usd")).toBe("0.01");
      expect(attr(payment, "payment.network")).toBe(devnet.manifest.evm.network);
      expect(attr(payment, "payment.payee_host")).toMatch(/^127\.0\.0\.1:\d+$/);
      expect(attr(payment, "caller")).toBe("devnet");
      // Under the turn (through the tool that paid), never a trace of its own.
      const ancestors = new Set<string>();
      for (let at = payment; at?.parentSpanId; at = inTrace.find((s) => s.spanId === at?.parentSpanId))
        ancestors.add(at.parentSpanId);
      expect(ancestors.has(turn.spanId)).toBe(true);
      const phases = inTrace.filter((s) => s.parentSpanId === payment?.spanId).map((s) => s.name);
      expect(phases).toEqual(expect.arrayContaining(["payment.reserve", "payment.settle"]));
    }
  });
});
