import { describe, expect, it } from "vitest";
import { buildService } from "../../test/helpers.js";
import type { PageAnswer } from "../payments/index.js";

/**
 * The approval page's routes (unit: fakes behind them): no bearer token needed even with
 * REQUIRE_AUTH, answers parsed before the domain sees them, the data never in the page's answer,
 * replays marked, and the same quota as /api/chat.
 */

const ID = "pay_0b0e2e8c-5b7e-4a53-9d2f-6a7a1f0c9d11";
const WALLET = "0x976EA74026E726554dB657fA54763abd0C3a0aa9";
const SIGNATURE = `0x${"ab".repeat(65)}`;

function service(points = "100") {
  const answers: PageAnswer[] = [];
  const { app } = buildService(
    { REQUIRE_AUTH: "true", AUTH_TOKENS: "alice=token-for-alice-0123456789", RATE_LIMIT_POINTS: points },
    {
      approvals: {
        view: async (id) =>
          id === ID
            ? {
                paymentId: ID,
                status: "awaiting_approval",
                amount: { atomic: "10000", usd: "0.01", asset: "0xasset" },
                token: "USDC",
                network: "eip155:8453",
                networkName: "Base",
                payTo: "0xpayee",
                service: { url: "https://api.example.com/x" },
                wallet: WALLET,
              }
            : undefined,
        answer: async (input) => {
          answers.push(input);
          return {
            paymentId: ID,
            status: "settled",
            amount: { atomic: "10000", usd: "0.01", asset: "0xasset" },
            network: "eip155:8453",
            transaction: "0xtx",
            replayed: answers.length > 1,
          };
        },
      },
    },
  );
  const post = (body: unknown, id = ID) =>
    app.request(`/api/approvals/${id}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
  return { app, answers, post };
}

describe("/api/approvals/:paymentId", () => {
  it("shows a payment without a bearer token (REQUIRE_AUTH or not), and 404 for an unknown one", async () => {
    const { app } = service();
    const shown = await app.request(`/api/approvals/${ID}`);
    expect(shown.status).toBe(200);
    expect(shown.headers.get("cache-control")).toBe("no-store");
    expect(await shown.json()).toMatchObject({ paymentId: ID, networkName: "Base", wallet: WALLET });
    const unknown = await app.request("/api/approvals/pay_00000000-0000-4000-8000-000000000000");
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get("content-type")).toContain("application/problem+json");
  });

  it("takes the wallet's answer, parsed, with the id from the path; a replay is marked", async () => {
    const { answers, post } = service();
    const first = await post({
      signature: SIGNATURE,
      walletAddress: WALLET.toLowerCase(),
      paymentId: "pay_other",
    });
    expect(first.status).toBe(200);
    expect(await first.json()).toEqual({
      paymentId: ID,
      status: "settled",
      amount: { atomic: "10000", usd: "0.01", asset: "0xasset" },
      network: "eip155:8453",
      transaction: "0xtx",
    });
    expect(answers[0]).toMatchObject({
      answer: { paymentId: ID, kind: "signature", signature: SIGNATURE },
      wallet: { chain: "evm", address: WALLET },
    });
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    expect((await post({ signature: SIGNATURE })).headers.get("idempotent-replayed")).toBe("true");
    await post({ reject: true, signature: SIGNATURE });
    expect(answers[2]).toMatchObject({ answer: { kind: "reject" }, declineSignature: SIGNATURE });
  });

  it("refuses a malformed answer before the domain sees it, with the chat's codes", async () => {
    const { answers, post, app } = service();
    const code = async (res: Response) => ((await res.json()) as { code: string }).code;
    expect(await code(await post({ signature: "nope" }))).toBe("approval_invalid");
    expect(await code(await post({ signature: SIGNATURE, transaction: "AAAA" }))).toBe("approval_invalid");
    expect(await code(await post({}))).toBe("approval_invalid");
    expect(await code(await post({ signature: SIGNATURE, walletAddress: "0x12" }))).toBe("invalid_wallet");
    expect(await code(await post({ signature: SIGNATURE }, "pay_nope"))).toBe("approval_not_found");
    const big = await post({ signature: `0x${"ab".repeat(20_000)}` });
    expect(big.status).toBe(413);
    const text = await app.request(`/api/approvals/${ID}`, { method: "POST", body: "signature=0x" });
    expect(text.status).toBe(415);
    expect(answers).toEqual([]);
  });

  it("counts against the caller's quota like /api/chat: over it, 429 with Retry-After", async () => {
    const { app } = service("2");
    expect((await app.request(`/api/approvals/${ID}`)).status).toBe(200);
    expect((await app.request(`/api/approvals/${ID}`)).status).toBe(200);
    const limited = await app.request(`/api/approvals/${ID}`);
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toMatch(/^\d+$/);
  });

  it("keeps an answer being delivered in the lifecycle, so a shutdown waits for it to be recorded", async () => {
    let finish: () => void = () => {};
    const delivered = new Promise<void>((resolve) => {
      finish = resolve;
    });
    const { app, lifecycle } = buildService(
      {},
      {
        approvals: {
          view: async () => undefined,
          answer: async () => {
            await delivered;
            return {
              paymentId: ID,
              status: "settled",
              amount: { atomic: "1", usd: "0.000001", asset: "0xasset" },
              network: "eip155:8453",
              replayed: false,
            };
          },
        },
      },
    );
    const answering = app.request(`/api/approvals/${ID}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ signature: SIGNATURE }),
    });
    await expect.poll(() => lifecycle.backgroundTasks).toBe(1);
    finish();
    expect((await answering).status).toBe(200);
    await lifecycle.idle();
    expect(lifecycle.backgroundTasks).toBe(0);
  });
});
