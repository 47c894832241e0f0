/**
 * docs/payments.md#spending-limits: many concurrent paid chats for one wallet against a
 * daily limit that allows N settle exactly N and the ledger equals the chain; a retried request
 * (in sequence and in parallel) and a model that asks twice never pay twice.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { walletAddress } from "../../src/devnet/testing/index.js";
import { formatUsd } from "../../src/money/index.js";
import type { PaymentRecord } from "../../src/payments/index.js";
import {
  type Booted,
  boot,
  type ChatOptions,
  chat,
  chatBody,
  chatHeaders,
  chatRequest,
  dropSchema,
  evmBalances,
  ledgerOf,
  payCall,
  poll,
  priceOf,
  readChat,
  rowsOf,
  ScriptedModels,
  STORES,
  type StoreKind,
  useTestDevnet,
} from "./harness.js";

const devnet = useTestDevnet();
const models = new ScriptedModels();

describe.each(STORES)("concurrency and retries (%s)", (store: StoreKind) => {
  let booted: Booted;
  const token = () => devnet.manifest.devToken;
  const payer2 = () => walletAddress(devnet, "evm", "payer-2");

  beforeAll(async () => {
    booted = await boot(devnet, { store, models: models.registry });
  });
  afterAll(async () => {
    await booted?.close();
    await dropSchema(booted?.schema);
  });

  /** A daily limit that leaves room for exactly `n` more weather calls for this wallet. */
  async function dailyAllowing(n: bigint, wallet: string): Promise<string> {
    const spent = await ledgerOf(booted.running).spending(wallet, new Date());
    return formatUsd(spent.today + n * priceOf(devnet, "weather"));
  }

  it("settles exactly N of 12 concurrent paid chats under a daily limit that allows N; the ledger equals the chain", async () => {
    const N = 3;
    const wallet = payer2();
    const daily = await dailyAllowing(BigInt(N), wallet);
    const before = await evmBalances(devnet, "payer-2");
    const results = await Promise.all(
      Array.from({ length: 12 }, () =>
        chat(booted.running, { wallet, token: token(), spendingLimits: { daily } }),
      ),
    );
    const reasons = results.map((r) => r.finish.finishReason).sort();
    expect(reasons.filter((r) => r === "payment-complete")).toHaveLength(N);
    expect(reasons.filter((r) => r === "limit-exceeded")).toHaveLength(12 - N);
    const price = priceOf(devnet, "weather");
    for (const r of results.filter((r) => r.finish.finishReason === "limit-exceeded")) {
      expect(r.errors.at(-1)).toMatchObject({ code: "limit_exceeded", limit: "daily", priceUsd: "0.01" });
      expect(r.payments.map((p) => p.status)).not.toContain("signed");
      // The meter agrees with the refusal: it is read under the same lock as the decision, so it
      // counts the payments reserved a moment before by the other chats.
      const quoted = r.payments.find((p) => p.status === "quoted");
      expect(BigInt(quoted?.budget?.daily.remaining.atomic ?? "-1")).toBeLessThan(price);
    }
    // Each payment that went through saw those reserved before it: N distinct meters.
    const paidMeters = results
      .filter((r) => r.finish.finishReason === "payment-complete")
      .map((r) => r.payments.find((p) => p.status === "quoted")?.budget?.daily.remaining.atomic);
    expect(new Set(paidMeters).size).toBe(N);
    for (const remaining of paidMeters) expect(BigInt(remaining ?? "-1")).toBeGreaterThanOrEqual(price);

    const rows: PaymentRecord[] = (await Promise.all(results.map((r) => rowsOf(booted.running, r)))).flat();
    const settled = rows.filter((r) => r.status === "settled");
    expect(settled).toHaveLength(N);
    expect(rows.filter((r) => r.status !== "settled")).toEqual([]);
    expect(new Set(settled.map((r) => r.txHash)).size).toBe(N);
    const ledgerTotal = settled.reduce((sum, r) => sum + r.amount, 0n);

    const after = await evmBalances(devnet, "payer-2");
    expect(before.payer - after.payer).toBe(ledgerTotal);
    expect(after.merchant - before.merchant).toBe(ledgerTotal);
    expect(ledgerTotal).toBe(BigInt(N) * priceOf(devnet, "weather"));
    const summary = await ledgerOf(booted.running).spending(wallet, new Date());
    expect(summary.pending + summary.unknown).toBe(0n);
  });

  describe("Idempotency-Key", () => {
    const options = (key: string, extra: Partial<ChatOptions> = {}): ChatOptions => ({
      wallet: payer2(),
      token: token(),
      headers: { "Idempotency-Key": key },
      ...extra,
    });
    const send = (o: ChatOptions) =>
      booted.running.service.app.request("/api/chat", chatRequest(chatBody(o), chatHeaders(o)));

    it("replays a retried request instead of paying again", async () => {
      const key = `retry-${store}-${Date.now()}`;
      const before = await evmBalances(devnet, "payer-2");
      const first = await readChat(await send(options(key)));
      expect(first.finish.finishReason).toBe("payment-complete");
      expect(first.headers.get("idempotent-replayed")).toBeNull();

      const again = await readChat(await send(options(key)));
      expect(again.status).toBe(200);
      expect(again.headers.get("idempotent-replayed")).toBe("true");
      expect(again.finish).toEqual(first.finish);
      expect(again.payments).toEqual(first.payments);

      const after = await evmBalances(devnet, "payer-2");
      expect(before.payer - after.payer).toBe(priceOf(devnet, "weather"));
      expect(await rowsOf(booted.running, first)).toHaveLength(1);
    });

    /*
     * Found by a black-box attack run: the abandoned attempt's stream (its payment `submitted`,
     * finish `stop`) was stored and replayed for a day, while the ledger said settled.
     */
    it("a client that leaves once its payment is submitted: the retry answers the ledger's outcome, paid once", async () => {
      const key = `left-${store}-${Date.now()}`;
      const before = await evmBalances(devnet, "payer-2");
      await devnet.faults.set({ settleDelayMs: 400 });
      const leave = new AbortController();
      const o = options(key);
      const first = await booted.running.service.app.request("/api/chat", {
        ...chatRequest(chatBody(o), chatHeaders(o)),
        signal: leave.signal,
      });
      const reader = first.body?.getReader();
      if (!reader) throw new Error("no body");
      let seen = "";
      while (!seen.includes('"status":"submitted"')) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`the stream ended before submitted: ${seen}`);
        seen += new TextDecoder().decode(value);
      }
      leave.abort();
      await reader.cancel().catch(() => {});
      await devnet.faults.set({ settleDelayMs: 0 });
      // While the payment runs the key is in progress; then the ledger answers it.
      const again = await poll(async () => {
        const response = await send(o);
        return response.status === 409 ? undefined : readChat(response);
      }, 20_000);
      expect(again.headers.get("idempotent-replayed")).toBe("true");
      const rows = await ledgerOf(booted.running).listByScope(first.headers.get("x-request-id") ?? "");
      expect(rows.map((r) => r.status)).toEqual(["settled"]);
      expect(again.finish.finishReason).toBe("payment-complete");
      expect(again.finish.transactions).toEqual([rows[0]?.txHash]);
      expect(again.payments.at(-1)).toMatchObject({ status: "settled" });
      const after = await evmBalances(devnet, "payer-2");
      expect(before.payer - after.payer).toBe(priceOf(devnet, "weather"));
    });

    /*
     * Found by a black-box run: a retry answered from the ledger while the payment was unclear
     * left the key naming the retry (which ran nothing), so the next retry found no payment under
     * it and ran afresh: one key, two payments.
     */
    it("an unclear payment's key, retried twice: both answered from the first attempt's payment, never run again", async () => {
      const key = `unclear-${store}-${Date.now()}`;
      const o = options(key);
      const before = await evmBalances(devnet, "payer-2");
      await devnet.faults.set({ settleFail: true });
      const first = await readChat(await send(o));
      expect(first.finish.finishReason).toBe("payment-unclear");
      await devnet.faults.set({ settleFail: false });
      const rows = () => ledgerOf(booted.running).listByScope(first.headers.get("x-request-id") ?? "");
      const [row] = await rows();
      for (const _ of [1, 2]) {
        const again = await readChat(await send(o));
        expect(again.headers.get("idempotent-replayed")).toBe("true");
        expect(again.payments.map((p) => p.paymentId)).toEqual([row?.paymentId]);
      }
      // Nothing new ran: the one payment the facilitator refused moved no money.
      expect(await evmBalances(devnet, "payer-2")).toEqual(before);
    });

    it("pays once for the same key sent five times at once", async () => {
      const key = `parallel-${store}-${Date.now()}`;
      const before = await evmBalances(devnet, "payer-2");
      const responses = await Promise.all(Array.from({ length: 5 }, () => send(options(key))));
      const streamed = responses.filter((r) => r.status === 200 && !r.headers.get("idempotent-replayed"));
      expect(streamed).toHaveLength(1);
      for (const r of responses.filter((r) => !streamed.includes(r))) {
        if (r.status === 200) expect(r.headers.get("idempotent-replayed")).toBe("true");
        else {
          expect(r.status).toBe(409);
          expect(await r.json()).toMatchObject({ code: "idempotency_conflict" });
        }
      }
      const [winner] = streamed;
      if (!winner) throw new Error("no winner");
      const first = await readChat(winner);
      expect(first.finish.finishReason).toBe("payment-complete");
      await Promise.all(responses.map((r) => (r.bodyUsed ? undefined : r.text())));

      // Once finished, every retry is a replay of that one outcome.
      const later = await readChat(await send(options(key)));
      expect(later.headers.get("idempotent-replayed")).toBe("true");
      expect(later.finish.transactionHash).toBe(first.finish.transactionHash);

      const after = await evmBalances(devnet, "payer-2");
      expect(before.payer - after.payer).toBe(priceOf(devnet, "weather"));
      expect(after.merchant - before.merchant).toBe(priceOf(devnet, "weather"));
    });

    it("replays a retry whose JSON writes the same body's keys in another order", async () => {
      const key = `order-${store}-${Date.now()}`;
      const o = options(key);
      const first = await readChat(await send(o));
      expect(first.finish.finishReason).toBe("payment-complete");
      const before = await evmBalances(devnet, "payer-2");
      const reversed = (value: unknown): unknown =>
        Array.isArray(value)
          ? value.map(reversed)
          : typeof value === "object" && value !== null
            ? Object.fromEntries(
                Object.entries(value)
                  .reverse()
                  .map(([k, v]) => [k, reversed(v)]),
              )
            : value;
      const body = JSON.stringify(reversed(chatBody(o)));
      expect(body).not.toBe(JSON.stringify(chatBody(o)));
      const again = await readChat(
        await booted.running.service.app.request("/api/chat", chatRequest(body, chatHeaders(o))),
      );
      expect(again.headers.get("idempotent-replayed")).toBe("true");
      expect(again.finish).toEqual(first.finish);
      expect(await evmBalances(devnet, "payer-2")).toEqual(before);
    });

    it("refuses the same key with another body: 409 idempotency_conflict, nothing paid", async () => {
      const key = `conflict-${store}-${Date.now()}`;
      const first = await readChat(await send(options(key)));
      expect(first.finish.finishReason).toBe("payment-complete");
      const before = await evmBalances(devnet, "payer-2");
      const other = await send(options(key, { message: "What's the weather in Berlin?" }));
      expect(other.status).toBe(409);
      expect(other.headers.get("content-type")).toMatch(/^application\/problem\+json/);
      expect(await other.json()).toMatchObject({ code: "idempotency_conflict", status: 409 });
      expect(await evmBalances(devnet, "payer-2")).toEqual(before);
    });
  });

  it.each([
    ["twice in one step", (c: ReturnType<typeof payCall>) => [[c, c]]],
    ["in two steps", (c: ReturnType<typeof payCall>) => [[c], [c]]],
  ] as const)("pays once when a model calls pay_and_fetch for the same thing %s", async (name, shape) => {
    const before = await evmBalances(devnet, "payer-2");
    const message = models.script(`twice-${name}`, shape(payCall(devnet, "weather", { maxUsd: "0.01" })));
    const result = await chat(booted.running, { wallet: payer2(), token: token(), message });
    expect(result.finish.finishReason).toBe("payment-complete");
    expect(new Set(result.payments.map((p) => p.paymentId)).size).toBe(1);
    expect(result.payments.filter((p) => p.status === "signed")).toHaveLength(1);
    expect(result.finish.transactions).toHaveLength(1);
    const rows = await rowsOf(booted.running, result);
    expect(rows.map((r) => r.status)).toEqual(["settled"]);
    const after = await evmBalances(devnet, "payer-2");
    expect(before.payer - after.payer).toBe(priceOf(devnet, "weather"));
  });
});
