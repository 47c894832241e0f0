import { encodePaymentResponseHeader } from "@x402/core/http";
import { describe, expect, it } from "vitest";
import type { SafeFetch, SafeFetchInit, SafeResponse } from "../../outbound/index.js";
import { MemoryLedger } from "../../store/memory/index.js";
import type { PaymentRecord } from "../ports/index.js";
import { Clock, RecordingObserver, USD } from "../testing/index.js";
import { type DeliveryDeps, deliver, PaymentRun } from "./index.js";

/**
 * Delivery (unit, memory ledger): the paid request goes to the payee once, and what comes back
 * decides the record: settled with the answer, or unclear (counted, never re-sent, the chain asked
 * once right away).
 */

const payee = { url: "https://toy.example/weather?city=paris", method: "GET" as const };
const ok = (headers: Record<string, string> = {}): SafeResponse => ({
  status: 200,
  headers: new Headers(headers),
  url: payee.url,
  method: "GET",
  body: new TextEncoder().encode('{"ok":true}'),
  truncated: false,
});
const proof = {
  "PAYMENT-RESPONSE": encodePaymentResponseHeader({
    success: true,
    transaction: "0xfeed",
    network: "toy:1",
    payer: "0xwallet",
  }),
};

type Confirmation = Awaited<ReturnType<DeliveryDeps["chains"]["confirm"]>>;

async function setup(
  answer: () => Promise<SafeResponse>,
  verdict?: (id: string, l: MemoryLedger) => Promise<void>,
  confirmation: Confirmation = { payer: "0xwallet" },
) {
  const ledger = new MemoryLedger();
  const clock = new Clock();
  const observer = new RecordingObserver();
  const run = new PaymentRun(
    ledger,
    observer,
    {
      paymentId: "pay_1",
      scopeId: "req_1",
      wallet: "0xwallet",
      service: payee.url,
      network: "toy:1",
      asset: "0xasset",
      payTo: "0xpayee",
      amount: USD,
    },
    clock.date,
  );
  const limits = { perTransaction: USD, perRequest: USD, daily: USD };
  await run.reserveAndRecordIntent({ requirement: {} as never, limits, authorization: { nonce: "0x01" } });
  const calls: Array<{ url: string; init: SafeFetchInit | undefined }> = [];
  const fetch: SafeFetch = async (url, init) => {
    calls.push({ url, init });
    return answer();
  };
  let asked = 0;
  const reconciler = {
    async resolve(id: string): Promise<PaymentRecord | undefined> {
      asked += 1;
      await verdict?.(id, ledger);
      return ledger.get(id);
    },
  };
  const confirmed: Array<{ authorization: unknown; transaction: string }> = [];
  const chains = {
    async confirm(payment: { authorization: unknown }, transaction: string) {
      confirmed.push({ authorization: payment.authorization, transaction });
      return confirmation;
    },
  };
  const outcome = await deliver({ fetch, ledger, reconciler, chains, serviceTimeoutMs: 1_000 }, run, payee, {
    "PAYMENT-SIGNATURE": "signed",
  });
  return { outcome, calls, asked: () => asked, row: await ledger.get("pay_1"), observer, confirmed };
}

describe("delivery", () => {
  it("sends once, to the payee only, and records the settlement with the answer", async () => {
    const { outcome, calls, asked, row } = await setup(async () => ok(proof));
    expect(outcome).toMatchObject({ status: "paid", transaction: "0xfeed", payer: "0xwallet" });
    expect(calls).toHaveLength(1);
    expect(calls[0]?.url).toBe(payee.url);
    expect(calls[0]?.init?.headers).toMatchObject({ "PAYMENT-SIGNATURE": "signed" });
    expect(calls[0]?.init?.followCrossOrigin).toBe(false);
    expect(calls[0]?.init?.allowOrigin?.("https://toy.example")).toBe(true);
    expect(calls[0]?.init?.allowOrigin?.("https://elsewhere.example")).toBe(false);
    expect(asked()).toBe(0);
    expect(row).toMatchObject({ status: "settled", txHash: "0xfeed" });
  });

  it("checks the service's settlement response on chain, against the authorization it signed", async () => {
    const { confirmed, row } = await setup(async () => ok(proof));
    expect(confirmed).toEqual([{ authorization: { nonce: "0x01" }, transaction: "0xfeed" }]);
    expect(row?.status).toBe("settled");
  });

  it("a settlement response the chain does not confirm is unclear, never settled on the service's word", async () => {
    const { outcome, asked, row } = await setup(async () => ok(proof), undefined, "unconfirmed");
    expect(outcome).toMatchObject({ status: "unknown", error: { reason: "no_settlement_proof" } });
    expect(asked()).toBe(1);
    expect(row?.status).toBe("unknown");
    expect(row?.txHash ?? null).toBeNull();
  });

  it("a claimed transaction that is not the payment's, when the chain shows the payment landed: paid with the chain's transaction and the answer", async () => {
    const landed = async (id: string, ledger: MemoryLedger) =>
      ledger.transition(id, "settled", { txHash: "0xbeef", payer: "0xwallet" }, new Date());
    const { outcome, row } = await setup(async () => ok(proof), landed, "unconfirmed");
    expect(outcome).toMatchObject({ status: "paid", transaction: "0xbeef" });
    expect(outcome.error).toBeUndefined();
    expect(outcome.response?.status).toBe(200);
    expect(row).toMatchObject({ status: "settled", txHash: "0xbeef" });
  });

  it("with no RPC for the network nothing can check the claim: it stands, as before", async () => {
    const { outcome, row } = await setup(async () => ok(proof), undefined, "unchecked");
    expect(outcome).toMatchObject({ status: "paid", transaction: "0xfeed", payer: "0xwallet" });
    expect(row).toMatchObject({ status: "settled", txHash: "0xfeed" });
  });

  it("an unclear answer is recorded unknown, still counted, and the chain is asked once now", async () => {
    const { outcome, calls, asked, row } = await setup(async () => ok());
    expect(outcome).toMatchObject({ status: "unknown", error: { reason: "no_settlement_proof" } });
    expect(calls).toHaveLength(1);
    expect(asked()).toBe(1);
    expect(row?.status).toBe("unknown");
  });

  it("when the chain says it landed, the payment is paid even though the service did not say so", async () => {
    const landed = async (id: string, ledger: MemoryLedger) =>
      ledger.transition(id, "settled", { txHash: "0xbeef", payer: "0xwallet" }, new Date());
    const { outcome, row } = await setup(async () => {
      throw new TypeError("socket hang up");
    }, landed);
    expect(outcome).toMatchObject({
      status: "paid",
      transaction: "0xbeef",
      error: { reason: "settled_undelivered", code: "service_undelivered" },
    });
    expect(row?.history.map((h) => h.status)).toEqual([
      "reserved",
      "signed",
      "submitted",
      "unknown",
      "settled",
    ]);
  });

  it("a reconciler that fails leaves the payment unknown (read back from the ledger)", async () => {
    const { outcome, row } = await setup(
      async () => ok(),
      async () => {
        throw new Error("chain down");
      },
    );
    expect(outcome.status).toBe("unknown");
    expect(row?.status).toBe("unknown");
  });
});
