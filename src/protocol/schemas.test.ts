import { describe, expect, it } from "vitest";
import { paymentHistorySchema, paymentStateSchema } from "./payment.js";
import { decodeLine, finishPayloadSchema, ProtocolError, paymentUpdateSchema } from "./stream.js";

const update = {
  paymentId: "pay_1",
  status: "quoted",
  service: { url: "http://x/weather" },
  amount: { atomic: "10000", usd: "0.01" },
};

describe("the protocol's schemas (zod/v4-mini, declared as ProtocolSchema)", () => {
  it("the decoder refuses a payload that breaks its schema and says where", () => {
    expect(() => decodeLine(`p:${JSON.stringify({ ...update, status: "paid" })}`)).toThrow(
      /bad p: payload at status/,
    );
    expect(() =>
      decodeLine(`p:${JSON.stringify({ ...update, amount: { atomic: "1.5", usd: "1.5" } })}`),
    ).toThrow(/payload at amount\.atomic/);
    expect(() => decodeLine('d:{"finishReason":"stop"}')).toThrow(ProtocolError);
    expect(() => decodeLine("0:{}")).toThrow(/bad 0: payload at \(payload\)/);
  });

  it("keeps fields added later (loose objects) and drops nothing it knows", () => {
    const event = decodeLine(`p:${JSON.stringify({ ...update, later: { x: 1 } })}`);
    expect(event).toEqual({ type: "payment", payment: { ...update, later: { x: 1 } } });
  });

  it("are Standard Schemas (what useChat takes) with zod's parse and safeParse", async () => {
    const standard = paymentUpdateSchema["~standard"];
    expect(standard.version).toBe(1);
    expect(await standard.validate(update)).toEqual({ value: update });
    const refused = await standard.validate({ ...update, service: "x" });
    expect("issues" in refused && refused.issues?.[0]?.path).toEqual(["service"]);
    expect(paymentUpdateSchema.parse(update)).toEqual(update);
    expect(() => finishPayloadSchema.parse({})).toThrow();
    const result = finishPayloadSchema.safeParse({ finishReason: "nope" });
    expect(result.success).toBe(false);
  });

  it("checks the payments API's answers", () => {
    const state = {
      paymentId: "pay_1",
      status: "settled",
      amount: { atomic: "10000", usd: "0.01", asset: "0xusdc" },
      network: "eip155:31337",
      payTo: "0xmerchant",
      service: "http://x/weather",
      createdAt: "2026-01-01T00:00:00.000Z",
      updatedAt: "2026-01-01T00:00:01.000Z",
    };
    expect(paymentStateSchema.safeParse(state).success).toBe(true);
    expect(
      paymentStateSchema.safeParse({ ...state, amount: { ...state.amount, atomic: "-1" } }).success,
    ).toBe(false);
    const page = { items: [{ ...state, explorerUrl: "https://explorer/tx/1" }], nextCursor: "c" };
    expect(paymentHistorySchema.parse(page)).toEqual(page);
    expect(paymentHistorySchema.safeParse({ items: [{ ...state, explorerUrl: 1 }] }).success).toBe(false);
  });
});
