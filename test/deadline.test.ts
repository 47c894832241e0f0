/**
 * docs/protocol.md#limits: the request deadline caps the stream whatever a tool is doing. A paid call whose
 * settlement hangs does not hold the stream open: at the deadline the stream ends with `e:` then
 * `d:` naming the payment as pending, while the payment finishes and is recorded in the background
 * (and a shutdown waits for it). A configuration that cannot keep the cap is refused at start.
 */
import { type ToolSet, tool } from "ai";
import { describe, expect, it } from "vitest";
import type { ToolProvider } from "../src/agent/index.js";
import { ConfigError, loadConfig } from "../src/config/index.js";
import type { PaymentUpdate } from "../src/protocol/index.js";
import { payInputSchema, TOOL_NAMES } from "../src/tools/contract.js";
import { buildService, chatRequest, readEvents, singleModelRegistry } from "./helpers.js";
import { scriptedModel } from "./scripted.js";

const WALLET = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const body = { messages: [{ role: "user", content: "weather in Paris" }], walletAddress: WALLET };

/**
 * pay_and_fetch as the pipeline runs it, up to `submitted`; then it waits for a settlement that
 * only comes when the test says so, records the outcome in its "ledger", and streams `settled`.
 */
function hangingPayment() {
  let settle!: () => void;
  const settlement = new Promise<void>((resolve) => {
    settle = resolve;
  });
  const ledger: string[] = [];
  let finished = false;
  const tools: ToolProvider = (ctx): ToolSet => ({
    [TOOL_NAMES.pay]: tool({
      inputSchema: payInputSchema,
      execute: async (input) => {
        const base: PaymentUpdate = {
          paymentId: "pay_slow",
          status: "quoted",
          service: { url: input.url },
          amount: { atomic: "10000", usd: "0.01" },
          network: "eip155:31337",
        };
        for (const status of ["quoted", "reserved", "signed", "submitted"] as const) {
          ctx.emitPayment({ ...base, status });
          ledger.push(status);
        }
        await settlement; // the facilitator takes its time; the client's signal is not listened to
        ledger.push("settled");
        ctx.emitPayment({ ...base, status: "settled", transaction: "0xabc" });
        ctx.recordPayment({
          paymentId: "pay_slow",
          status: "settled",
          service: input.url,
          transaction: "0xabc",
        });
        finished = true;
        return { status: "paid", paymentId: "pay_slow", transaction: "0xabc" };
      },
    }),
  });
  return { tools, settle, ledger, isFinished: () => finished };
}

const payCall = {
  toolName: TOOL_NAMES.pay,
  input: { url: "https://api.example.com/weather", maxUsd: "0.01" },
};

describe("the deadline while a payment is settling", () => {
  it("ends the stream with e: deadline_exceeded then d: naming the payment pending; the payment finishes in the background", async () => {
    const slow = hangingPayment();
    const service = buildService(
      { REQUEST_TIMEOUT_MS: "300", PAYMENTS: "off" },
      { models: singleModelRegistry(scriptedModel([[payCall]])), tools: slow.tools },
    );
    const res = await service.app.request("/api/chat", chatRequest(body));
    const events = await readEvents(res);

    // The stream is over and the settlement has not even happened yet.
    expect(slow.isFinished()).toBe(false);
    expect(events.map((e) => e.type)).toEqual([
      "payment",
      "payment",
      "payment",
      "payment",
      "error",
      "finish",
    ]);
    expect(events.at(-2)).toMatchObject({
      type: "error",
      error: { code: "deadline_exceeded", timeoutMs: 300 },
    });
    const finish = events.at(-1);
    if (finish?.type !== "finish") throw new Error("no d:");
    expect(finish.finish.finishReason).toBe("error");
    expect(finish.finish.payments).toEqual([
      {
        paymentId: "pay_slow",
        status: "submitted",
        service: "https://api.example.com/weather",
        amountUsd: "0.01",
        network: "eip155:31337",
        pending: true,
      },
    ]);
    expect(service.lifecycle.backgroundTasks).toBe(1);
    expect(service.lifecycle.openTurns).toBe(0);

    // A shutdown now waits for the payment to finish and be recorded before resources close.
    const order: string[] = [];
    const stopped = service.shutdown().then(() => order.push("shutdown done"));
    await new Promise((resolve) => setImmediate(resolve));
    order.push("settlement");
    slow.settle();
    await stopped;
    expect(order).toEqual(["settlement", "shutdown done"]);
    expect(slow.isFinished()).toBe(true);
    expect(slow.ledger).toEqual(["quoted", "reserved", "signed", "submitted", "settled"]);
    expect(service.lifecycle.backgroundTasks).toBe(0);
  });

  it("answers JSON mode at the deadline too: 504, the payment listed as pending", async () => {
    const slow = hangingPayment();
    const service = buildService(
      { REQUEST_TIMEOUT_MS: "300", PAYMENTS: "off" },
      { models: singleModelRegistry(scriptedModel([[payCall]])), tools: slow.tools },
    );
    const res = await service.app.request("/api/chat", chatRequest(body, { Accept: "application/json" }));
    expect(slow.isFinished()).toBe(false);
    expect(res.status).toBe(504);
    const json = await res.json();
    expect(json.errors).toMatchObject([{ code: "deadline_exceeded" }]);
    expect(json.finish.payments).toMatchObject([
      { paymentId: "pay_slow", status: "submitted", pending: true },
    ]);
    slow.settle();
    await service.shutdown();
    expect(slow.isFinished()).toBe(true);
  });
});

describe("a configuration that cannot keep the deadline", () => {
  const refusal = (env: Record<string, string>): string => {
    try {
      loadConfig(env);
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      return (error as Error).message;
    }
    throw new Error("accepted");
  };

  it("is refused at start, naming the variables", () => {
    const slowService = refusal({ SERVICE_TIMEOUT_MS: "20000", MIN_TIME_LEFT_MS: "12000" });
    expect(slowService).toContain("SERVICE_TIMEOUT_MS (20000) must be below MIN_TIME_LEFT_MS (12000)");
    const shortRequest = refusal({ REQUEST_TIMEOUT_MS: "8000" });
    expect(shortRequest).toContain("MIN_TIME_LEFT_MS (12000) must be below REQUEST_TIMEOUT_MS (8000)");
    const both = refusal({
      REQUEST_TIMEOUT_MS: "8000",
      MIN_TIME_LEFT_MS: "9000",
      SERVICE_TIMEOUT_MS: "9000",
    });
    expect(both).toContain("SERVICE_TIMEOUT_MS");
    expect(both).toContain("REQUEST_TIMEOUT_MS");
  });

  it("is accepted when the budget fits, or when payments are off", () => {
    expect(
      loadConfig({ REQUEST_TIMEOUT_MS: "8000", MIN_TIME_LEFT_MS: "6000", SERVICE_TIMEOUT_MS: "5000" })
        .requestTimeoutMs,
    ).toBe(8000);
    expect(loadConfig({ PAYMENTS: "off", REQUEST_TIMEOUT_MS: "300" }).requestTimeoutMs).toBe(300);
    expect(loadConfig({}).payments.minTimeLeftMs).toBe(12000);
  });
});
