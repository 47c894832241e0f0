import { describe, expect, it } from "vitest";
import { TurnRecord } from "../agent/record.js";
import { AppError } from "../errors/index.js";
import { chooseMode, jsonResponse, streamHeaders } from "./answer.js";

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

// Found by a black-box run: SSE was chosen though the client gave it q=0, and a stream forced
// Connection: keep-alive on a client that asked to close (it waited about 6 s for the socket).
describe("the framing and headers of a chat answer", () => {
  it("takes no type the client gives q=0", () => {
    expect(chooseMode("text/event-stream;q=0, application/json")).toBe("json");
    expect(chooseMode("text/event-stream; q=0.000")).toBe("lines");
    expect(chooseMode("text/event-stream;q=0.1, application/json")).toBe("sse");
    expect(chooseMode("application/json")).toBe("json");
  });

  it("leaves the connection to the request", () => {
    expect(streamHeaders("req_1", "sse")).not.toHaveProperty("Connection");
  });
});
