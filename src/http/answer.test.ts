import { describe, expect, it } from "vitest";
import { TurnRecord } from "../agent/record.js";
import { AppError } from "../errors/index.js";
import { jsonResponse } from "./answer.js";

const BY = { model: "aimodel-2.0-flash-exp", provider: "offline", modelId: "m" } as const;

describe("the JSON answer's status", () => {
  // Found by a review: the status came from the last error of d:'s finish reason, which four codes
  // share, so a price refusal the turn made good answered 409 over a payment that failed (500).
  it("is the standing error's, which d: names, not a made-good refusal of the same finish reason", async () => {
    const response = await jsonResponse(async (emit, ended) => {
      const record = new TurnRecord(emit);
      record.recordPayment({ paymentId: "pay_y", status: "failed", service: "https://y.example/api" });
      record.reportError(new AppError("payment_failed", "failed", { details: { paymentId: "pay_y" } }));
      record.recordPayment({ paymentId: "pay_x1", status: "refused", service: "https://x.example/api" });
      record.reportError(new AppError("price_changed", "refused", { details: { paymentId: "pay_x1" } }));
      record.recordPayment({
        paymentId: "pay_x2",
        status: "settled",
        service: "https://x.example/api",
        transaction: "0x1",
      });
      const finish = record.finish(BY);
      ended();
      return finish;
    }, {});
    const body = (await response.json()) as { finish: { finishReason: string; errorCode?: string } };
    expect(body.finish).toMatchObject({ finishReason: "payment-failed", errorCode: "payment_failed" });
    expect(response.status).toBe(500);
  });
});
