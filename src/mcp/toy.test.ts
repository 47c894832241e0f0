import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { type CallToolResult, ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it } from "vitest";
import { createPaymentsFace } from "../payments/face/index.js";
import type { PaymentsFace } from "../payments/face.js";
import {
  createToyWorld,
  HELD_TOKEN,
  type ToyWorld,
  type ToyWorldOptions,
  USD,
} from "../payments/testing/index.js";
import type { SpendingLimitsInput, Wallet } from "../protocol/index.js";
import { createMcpServer } from "./index.js";

/**
 * The MCP server on the real payments face (the toy world: memory ledger, toy chain, toy x402
 * service): the model asks to pay more than the limits, in one call and in many small ones, and is
 * refused with the chat's code; a client without elicitation gets the approval URL.
 */

let w: ToyWorld;
let face: PaymentsFace;
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
  w.close();
});

function open(options: ToyWorldOptions = {}): void {
  w = createToyWorld(options);
  face = createPaymentsFace({
    pipeline: w.pipeline,
    discovery: { search: async () => ({ services: [], errors: [] }) },
    chains: w.chains,
    signers: w.signers,
    assets: w.config.assets,
    approvals: w.desk,
    history: w.memory,
    quoteSecret: "s".repeat(32),
  });
}

let sessions = 0;
/** One MCP session (its own scope), as a client's configuration sets it. */
async function session(
  over: { wallet?: Wallet; spendingLimits?: SpendingLimitsInput } = {},
  elicitation?: () => Promise<{ action: "accept" | "decline" | "cancel" }>,
) {
  const server = createMcpServer(
    face,
    { caller: "alice", bearerToken: HELD_TOKEN, wallet: w.held, scopeId: `mcp_${++sessions}`, ...over },
    {
      approvalUrl: (id) => `https://pay.example/approve/${id}`,
      callTimeoutMs: 60_000,
      now: w.clock.date,
      approvalPollMs: 1,
    },
  );
  const client = new Client(
    { name: "test", version: "1" },
    { capabilities: elicitation ? { elicitation: { url: {} } } : {} },
  );
  if (elicitation) client.setRequestHandler(ElicitRequestSchema, elicitation);
  const [a, b] = InMemoryTransport.createLinkedPair();
  await Promise.all([server.connect(a), client.connect(b)]);
  closers.push(() => client.close());
  const call = async (name: string, args: Record<string, unknown> = {}) =>
    (await client.callTool({ name, arguments: args })) as CallToolResult & {
      structuredContent: Record<string, unknown>;
    };
  const quote = async (n: number) => {
    const q = await call("get_quote", { url: `${w.url}?n=${n}` });
    return q.structuredContent.quoteId as string | undefined;
  };
  return { call, quote };
}

const refusedBy = (limit: string) => ({ error: { code: "limit_exceeded", limit } });

describe("MCP on the payments face: limits", () => {
  it("one call over the per-transaction limit: no quote id, and a looser session's quote is refused", async () => {
    open({ price: 600_000n });
    const tight = await session({ spendingLimits: { perTransaction: 500_000n } });
    const quoted = await tight.call("get_quote", { url: w.url });
    expect(quoted.structuredContent).toMatchObject({ refusal: { code: "limit_exceeded" } });
    expect(quoted.structuredContent.quoteId).toBeUndefined();

    const loose = await session();
    const id = await loose.quote(0);
    expect(id).toBeDefined();
    const paid = await tight.call("pay_quote", { quoteId: id });
    expect(paid.isError).toBe(true);
    expect(paid.structuredContent).toMatchObject(refusedBy("perTransaction"));
    expect(w.chain.transactions()).toEqual([]);
  });

  it("many small calls: the session's per-request limit, then the daily limit across sessions", async () => {
    open({
      price: 600_000n,
      limits: {
        defaults: { perTransaction: USD, perRequest: 2n * USD, daily: 2_500_000n },
        caps: { perTransaction: 100n * USD, perRequest: 100n * USD, daily: 1000n * USD },
      },
    });
    const first = await session();
    const ids = [await first.quote(1), await first.quote(2), await first.quote(3), await first.quote(4)];
    const results = [];
    for (const quoteId of ids) results.push(await first.call("pay_quote", { quoteId }));
    expect(results.slice(0, 3).map((r) => r.structuredContent.status)).toEqual(["paid", "paid", "paid"]);
    expect(results[3]?.isError).toBe(true);
    expect(results[3]?.structuredContent).toMatchObject(refusedBy("perRequest"));
    expect(w.chain.transactions()).toHaveLength(3); // 1.80 of 2.00 in this session

    const second = await session();
    const more = [await second.quote(5), await second.quote(6)];
    expect((await second.call("pay_quote", { quoteId: more[0] })).structuredContent.status).toBe("paid");
    const overDaily = await second.call("pay_quote", { quoteId: more[1] }); // 2.40 spent today, 0.60 more > 2.50
    expect(overDaily.isError).toBe(true);
    expect(overDaily.structuredContent).toMatchObject(refusedBy("daily"));
    expect(w.chain.transactions()).toHaveLength(4);
  });

  it("paying one quote twice pays once", async () => {
    open();
    const s = await session();
    const id = await s.quote(0);
    const a = await s.call("pay_quote", { quoteId: id });
    const b = await s.call("pay_quote", { quoteId: id });
    expect(b.structuredContent.paymentId).toBe(a.structuredContent.paymentId);
    expect(w.chain.transactions()).toHaveLength(1);
  });
});

describe("MCP on the payments face: approval", () => {
  it("a client without elicitation gets the approval URL; get_payment shows it waiting", async () => {
    open();
    const s = await session({ wallet: undefined });
    const user = await session({ wallet: w.user });
    const id = await user.quote(0);
    const paid = await user.call("pay_quote", { quoteId: id });
    expect(paid.isError).toBeFalsy();
    const paymentId = paid.structuredContent.paymentId as string;
    expect(paid.structuredContent).toMatchObject({
      status: "awaiting_approval",
      approvalUrl: `https://pay.example/approve/${paymentId}`,
      expiresAt: expect.any(String),
    });
    const read = await s.call("get_payment", { paymentId });
    expect(read.structuredContent).toMatchObject({
      status: "awaiting_approval",
      approvalUrl: expect.any(String),
    });
    expect(w.chain.transactions()).toEqual([]);
  });

  it("an approval left unsigned past its window ends the call approval_expired, as get_payment reads it", async () => {
    open();
    // The user opens the page and never signs: the window passes while the call waits.
    const user = await session({ wallet: w.user }, async () => {
      w.clock.advance(10 * 60_000);
      return { action: "accept" };
    });
    const paid = await user.call("pay_quote", { quoteId: await user.quote(0) });
    expect(paid.isError).toBe(true);
    expect(paid.structuredContent).toMatchObject({ error: { code: "approval_expired" }, status: "expired" });
    const read = await user.call("get_payment", { paymentId: paid.structuredContent.paymentId });
    expect(read.structuredContent).toMatchObject({ status: "expired" });
    expect(w.chain.transactions()).toEqual([]);
  });
});
