/**
 * docs/protocol.md#order-of-the-lines: a payment's last ledger write (the record of its settlement) may finish
 * after the model has its answer, but the turn waits for it before `d:`, so the finish line never
 * says less than the ledger holds; cut off, the turn ends at once and leaves the write running.
 */
import { type ToolSet, tool } from "ai";
import { describe, expect, it } from "vitest";
import { runTurn, type ToolProvider } from "../src/agent/index.js";
import type { PaymentUpdate, StreamEvent } from "../src/protocol/index.js";
import { payInputSchema, TOOL_NAMES } from "../src/tools/contract.js";
import { scriptedModel } from "./scripted.js";

const update: PaymentUpdate = {
  paymentId: "pay_held",
  status: "submitted",
  service: { url: "https://api.example.com/weather" },
  amount: { atomic: "10000", usd: "0.01" },
  network: "eip155:31337",
};

/** pay_and_fetch answering at once, its record held until the test releases it. */
function heldPayment() {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  const tools: ToolProvider = (ctx): ToolSet => ({
    [TOOL_NAMES.pay]: tool({
      inputSchema: payInputSchema,
      execute: async () => {
        // As the pipeline does: every step is streamed and recorded, `submitted` included.
        ctx.emitPayment(update);
        ctx.recordPayment({ paymentId: "pay_held", status: "submitted", service: "x" });
        ctx.holdPayment?.(
          gate.then(() => {
            ctx.emitPayment({ ...update, status: "settled", transaction: "0xabc" });
            ctx.recordPayment({
              paymentId: "pay_held",
              status: "settled",
              service: "x",
              transaction: "0xabc",
            });
          }),
        );
        return { status: "paid", paymentId: "pay_held", transaction: "0xabc" };
      },
    }),
  });
  return { tools, release };
}

function turn(tools: ToolProvider, cutoff?: AbortSignal) {
  const events: StreamEvent[] = [];
  const background: Promise<unknown>[] = [];
  const model = scriptedModel([[{ toolName: TOOL_NAMES.pay, input: { url: update.service.url } }]]);
  const done = runTurn(
    {
      models: { resolve: () => ({ model, provider: "mock", modelId: "scripted" }) },
      tools,
      maxSteps: 4,
    },
    {
      request: {
        messages: [{ role: "user", content: "weather" }],
        model: "aimodel-1.5-flash",
        temperature: 0,
        maxTokens: 100,
      },
      payer: { scopeId: "req_held" },
      signal: new AbortController().signal,
      ...(cutoff ? { cutoff } : {}),
      deadline: Number.MAX_SAFE_INTEGER,
      onBackground: (work) => void background.push(work),
    },
    (event) => void events.push(event),
  );
  return { events, background, done };
}

/** Let the turn run as far as it can without the held write (event-loop turns, no clock). */
async function settleLoop(turns = 50): Promise<void> {
  for (let i = 0; i < turns; i++) await new Promise((resolve) => setImmediate(resolve));
}

describe("a payment's record held beside its answer", () => {
  it("the model answers first; d: waits for the write and carries the settled payment", async () => {
    const held = heldPayment();
    const { events, done } = turn(held.tools);
    await settleLoop();
    const types = events.map((e) => e.type);
    expect(types).toContain("text");
    expect(types).not.toContain("finish");
    held.release();
    const finish = await done;
    const order = events.map((e) => (e.type === "payment" ? `p:${e.payment.status}` : e.type));
    expect(order.slice(-2)).toEqual(["p:settled", "finish"]);
    expect(finish.finishReason).toBe("payment-complete");
    expect(finish.transactions).toEqual(["0xabc"]);
  });

  it("cut off, the turn ends without waiting and leaves the write to the background", async () => {
    const held = heldPayment();
    const cutoff = new AbortController();
    const { events, background, done } = turn(held.tools, cutoff.signal);
    await settleLoop();
    cutoff.abort();
    const finish = await done;
    expect(events.at(-1)?.type).toBe("finish");
    // Found by a black-box run (the store froze before the settlement's record): `submitted`, not pending.
    expect(finish.payments).toEqual([
      expect.objectContaining({ paymentId: "pay_held", status: "submitted", pending: true }),
    ]);
    expect(background).toHaveLength(1);
    held.release();
    await Promise.all(background);
    expect(
      events.filter((e) => e.type === "payment").map((e) => e.type === "payment" && e.payment.status),
    ).toEqual(["submitted"]);
  });
});
