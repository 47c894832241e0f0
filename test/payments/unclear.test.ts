/**
 * An unclear payment is not called failed (docs/protocol.md#finish-reasons). The facilitator
 * answers too late (devnet fault `settleLate`: the settlement reaches the chain only after the
 * payer gave up): the stream shows `p:unknown`, then `e:payment_unclear` naming the payment and
 * saying it may have gone through, and the turn ends `payment-unclear`, not `payment-failed`.
 * Once the chain has it, the reconciler records it settled, and GET /api/payments/:id shows it, to
 * the caller that made it only.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChatClient, ChatHttpError } from "../../src/client/index.js";
import { walletAddress } from "../../src/devnet/testing/index.js";
import {
  type Booted,
  boot,
  chat,
  dropSchema,
  evmBalances,
  ledgerOf,
  poll,
  priceOf,
  STORES,
  type StoreKind,
  secretStrings,
  useTestDevnet,
} from "./harness.js";

const devnet = useTestDevnet();

const OTHER_TOKEN = "other-caller-token-0123456789";

describe.each(STORES)("a payment whose outcome is unclear (%s)", (store: StoreKind) => {
  let booted: Booted;
  beforeAll(async () => {
    // A short service timeout: the paid request gives up on the held settlement quickly.
    booted = await boot(devnet, {
      store,
      env: { SERVICE_TIMEOUT_MS: "1500", AUTH_TOKENS: `other=${OTHER_TOKEN}` },
    });
  });
  afterAll(async () => {
    await booted?.close();
    await dropSchema(booted?.schema);
  });

  const getPayment = (id: string, token?: string) =>
    booted.running.service.app.request(`/api/payments/${id}`, {
      headers: token ? { Authorization: `Bearer ${token}` } : {},
    });

  it("is reported payment_unclear (not failed), then read back settled by its own caller only", async () => {
    const token = devnet.manifest.devToken;
    const before = await evmBalances(devnet);
    await devnet.faults.set({ settleLate: true });
    const result = await chat(booted.running, { wallet: walletAddress(devnet, "evm", "payer"), token });

    // The stream: sent, then unknown; one error with its own code naming the payment.
    expect(result.payments.map((p) => p.status)).toEqual([
      "quoted",
      "reserved",
      "signed",
      "submitted",
      "unknown",
    ]);
    const paymentId = result.payments[0]?.paymentId ?? "";
    expect(paymentId).toMatch(/^pay_/);
    expect(result.errors).toEqual([expect.objectContaining({ code: "payment_unclear", paymentId })]);
    const message = result.errors[0]?.message ?? "";
    expect(message).toContain(paymentId);
    expect(message).toMatch(/may have gone through/);
    expect(message).toMatch(/checked against the chain/);
    expect(message).toMatch(/Do not pay again/);
    expect(result.finish.finishReason).toBe("payment-unclear");
    expect(result.finish.payments).toEqual([expect.objectContaining({ paymentId, status: "unknown" })]);
    for (const secret of secretStrings(devnet)) expect(result.raw).not.toContain(secret);

    // Its state, read back while unclear.
    const unclear = await getPayment(paymentId, token);
    expect(unclear.status).toBe(200);
    expect(await unclear.json()).toMatchObject({ paymentId, status: "unknown" });

    // Another caller, no caller, and an id that does not exist: the same 404.
    const missing = `pay_${crypto.randomUUID()}`;
    const answers = await Promise.all([
      getPayment(paymentId, OTHER_TOKEN),
      getPayment(paymentId),
      getPayment(missing, token),
    ]);
    for (const answer of answers) {
      expect(answer.status).toBe(404);
      expect(answer.headers.get("content-type")).toBe("application/problem+json");
      expect(await answer.json()).toEqual({
        type: "https://x402-chat-agent.dev/problems/not-found",
        title: "Not found",
        status: 404,
        detail: "No payment of yours has this id.",
        code: "not_found",
      });
    }

    // The facilitator finally settles; the reconciler, driven here, finds it on chain.
    await devnet.faults.set({ settleLate: false });
    const reconciler = booted.running.payments?.reconciler;
    if (!reconciler) throw new Error("payments are off");
    const settled = await poll(
      async () => {
        const row = await reconciler.resolve(paymentId);
        return row?.status === "settled" ? row : undefined;
      },
      15_000,
      "the late settlement on chain",
    );
    const read = await getPayment(paymentId, token);
    expect(read.status).toBe(200);
    const body = await read.json();
    expect(body).toEqual({
      paymentId,
      status: "settled",
      amount: { atomic: "10000", usd: "0.01", asset: devnet.manifest.evm.usdc },
      network: devnet.manifest.evm.network,
      payTo: settled.payTo,
      service: settled.service,
      transaction: settled.txHash,
      payer: settled.payer,
      createdAt: settled.createdAt.toISOString(),
      updatedAt: settled.updatedAt.toISOString(),
      settledAt: settled.settledAt?.toISOString(),
    });
    expect(body.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    // The SDK reads the same, and another caller's read rejects as a 404.
    const client = (t: string) =>
      new ChatClient({
        baseUrl: "http://service.test",
        token: t,
        fetch: (async (url: string, init?: RequestInit) =>
          booted.running.service.app.request(url, init)) as typeof fetch,
      });
    expect(await client(token).getPayment(paymentId)).toEqual(body);
    const refused = await client(OTHER_TOKEN)
      .getPayment(paymentId)
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ChatHttpError);
    expect(refused).toMatchObject({ status: 404, code: "not_found" });
    expect((await ledgerOf(booted.running).get(paymentId))?.status).toBe("settled");
    // Paid once, for the one authorization.
    const after = await evmBalances(devnet);
    expect(before.payer - after.payer).toBe(priceOf(devnet, "weather"));
  });
});
