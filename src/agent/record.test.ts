import { describe, expect, it } from "vitest";
import { AppError } from "../errors/index.js";
import type { StreamEvent } from "../protocol/index.js";
import { TurnRecord } from "./record.js";

/** How a turn's finish reason reads its refusals (docs/protocol.md, `d:`). */

const BY = { model: "aimodel-2.0-flash-exp", provider: "offline", modelId: "m" } as const;
const SERVICE = "https://prices.example/api/price";
const NETWORK = "eip155:8453";

function refused(record: TurnRecord, paymentId: string, code: "price_changed" | "limit_exceeded") {
  record.recordPayment({
    paymentId,
    status: "refused",
    service: SERVICE,
    amountUsd: "1.50",
    network: NETWORK,
  });
  record.reportError(new AppError(code, "refused", { details: { paymentId, reason: code } }));
}

function settled(record: TurnRecord, paymentId: string) {
  const tx = `0x${paymentId}`;
  record.recordPayment({
    paymentId,
    status: "settled",
    service: SERVICE,
    amountUsd: "1.50",
    network: NETWORK,
    transaction: tx,
  });
}

describe("the finish reason of a turn with a refusal", () => {
  it("a price refusal the model then paid is made good: payment-complete", () => {
    const record = new TurnRecord(() => {});
    refused(record, "pay_1", "price_changed");
    settled(record, "pay_2");
    expect(record.finish(BY).finishReason).toBe("payment-complete");
  });

  // Found by a review: any refusal counted as made good when the same service was paid at all.
  it("a limit's refusal stands beside a payment to the same service, before or after it", () => {
    const after = new TurnRecord(() => {});
    settled(after, "pay_1");
    refused(after, "pay_2", "limit_exceeded");
    expect(after.finish(BY).finishReason).toBe("limit-exceeded");
    const before = new TurnRecord(() => {});
    refused(before, "pay_1", "limit_exceeded");
    settled(before, "pay_2");
    expect(before.finish(BY).finishReason).toBe("limit-exceeded");
  });

  it("a price refusal after the only payment stands: nothing paid it again", () => {
    const record = new TurnRecord(() => {});
    settled(record, "pay_1");
    refused(record, "pay_2", "price_changed");
    expect(record.finish(BY).finishReason).toBe("payment-failed");
  });

  it("the model's text pieces go out cleaned as one text", () => {
    const sent: StreamEvent[] = [];
    const record = new TurnRecord((e) => sent.push(e));
    for (const text of ["a\uFE00", "\uFE01", "b"]) record.send({ type: "text", text });
    expect(sent).toEqual([
      { type: "text", text: "a\uFE00" },
      { type: "text", text: "b" },
    ]);
  });
});
