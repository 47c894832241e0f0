import { describe, expect, it } from "vitest";
import type { SafeResponse } from "../../outbound/index.js";
import { MemoryLedger } from "../../store/memory/index.js";
import type { PaymentOutcome } from "../rules/index.js";
import { Clock, RecordingObserver, USD } from "../testing/index.js";
import { PaymentRun } from "./index.js";

/**
 * The record of a settlement beside the answer (unit, memory ledger): with an observer that holds
 * the write, the paid outcome comes back before the move to `settled` is durable, and the `p:`
 * `settled` line (or the `outcome_unrecorded` failure) only once the write has ended.
 */

const response: SafeResponse = {
  status: 200,
  headers: new Headers(),
  url: "https://toy.example/",
  body: new Uint8Array(),
  truncated: false,
  method: "GET",
};

/** A ledger whose move to `settled` waits until released, then lands or fails. */
class GatedLedger extends MemoryLedger {
  release: (fail: boolean) => void = () => {};
  override async transition(...args: Parameters<MemoryLedger["transition"]>) {
    if (args[1] !== "settled") return super.transition(...args);
    const fail = await new Promise<boolean>((resolve) => {
      this.release = resolve;
    });
    if (fail) throw new Error("ledger down");
    return super.transition(...args);
  }
}

class HoldingObserver extends RecordingObserver {
  readonly held: Promise<unknown>[] = [];
  hold = (work: Promise<unknown>) => void this.held.push(work);
}

async function submitted() {
  const ledger = new GatedLedger();
  const clock = new Clock();
  const observer = new HoldingObserver();
  const run = new PaymentRun(
    ledger,
    observer,
    {
      paymentId: "pay_beside",
      scopeId: "req_beside",
      wallet: "0xwallet",
      service: "https://toy.example/",
      network: "toy:1",
      asset: "0xasset",
      payTo: "0xpayee",
      amount: USD,
    },
    clock.date,
  );
  await run.reserveAndRecordIntent({
    requirement: {
      scheme: "exact",
      network: "toy:1",
      amount: String(USD),
      asset: "0xasset",
      payTo: "0xpayee",
      maxTimeoutSeconds: 60,
    },
    limits: { perTransaction: 5n * USD, perRequest: 5n * USD, daily: 10n * USD },
    authorization: { nonce: "0x01" },
  });
  return { ledger, observer, run };
}

describe("a settlement recorded beside the answer", () => {
  it("answers at once, and streams settled only after the durable write", async () => {
    const { ledger, observer, run } = await submitted();
    const outcome = await run.settled({ transaction: "0xfeed" }, response);
    expect(outcome.status).toBe("paid");
    expect(observer.held).toHaveLength(1);
    expect(observer.statuses().at(-1)).toBe("submitted");
    expect((await ledger.get("pay_beside"))?.status).toBe("submitted");
    ledger.release(false);
    await Promise.all(observer.held);
    expect(observer.statuses().at(-1)).toBe("settled");
    expect(observer.summaries.at(-1)?.status).toBe("settled");
    expect((await ledger.get("pay_beside"))?.status).toBe("settled");
    expect(observer.errors).toEqual([]);
  });

  it("a write that fails is reported as outcome_unrecorded, the row left submitted", async () => {
    const { ledger, observer, run } = await submitted();
    await run.settled({ transaction: "0xfeed" }, response);
    ledger.release(true);
    const [recorded] = (await Promise.all(observer.held)) as PaymentOutcome[];
    expect(recorded?.error?.reason).toBe("outcome_unrecorded");
    expect(observer.statuses().at(-1)).toBe("unknown");
    expect(observer.updates.at(-1)?.reason).toBe("outcome_unrecorded");
    expect(observer.errors.map((e) => e.code)).toEqual(["payment_unclear"]);
    expect((await ledger.get("pay_beside"))?.status).toBe("submitted");
  });

  it("without a holder, the outcome waits for the write", async () => {
    const { ledger, observer, run } = await submitted();
    const plain = new RecordingObserver();
    Object.assign(run, { observer: plain });
    let done = false;
    const settling = run.settled({ transaction: "0xfeed" }, response).then((o) => {
      done = true;
      return o;
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(done).toBe(false);
    ledger.release(false);
    expect((await settling).status).toBe("paid");
    expect(plain.statuses()).toEqual(["settled"]);
    expect(observer.held).toEqual([]);
  });
});
