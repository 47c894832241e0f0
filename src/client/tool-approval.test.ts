import { Chat } from "@ai-sdk/react";
import { lastAssistantMessageIsCompleteWithApprovalResponses, type UIMessageChunk } from "ai";
import { describe, expect, it } from "vitest";
import { encodeLine, type PaymentUpdate, type StreamEvent } from "../protocol/stream.js";
import type { Eip1193Provider } from "./signer.js";
import { PAYMENT_TOOL, type PaymentApprovalDescriptor } from "./tool-parts.js";
import { PaymentChatTransport, type PaymentUIMessage } from "./transport.js";

/**
 * The transport's tool-approval parts, driven by the AI SDK's own `Chat` (what `useChat` wraps) over
 * a fake `fetch` that answers each request with a scripted protocol stream.
 */

const WALLET = "0x976EA74026E726554dB657fA54763abd0C3a0aa9";
const PAYEE = "0x15d34AAf54267DB7D7c367839AAf71A00a2C6A65";
const ID = "pay_1";
const METER = (after: string) => ({
  limit: { atomic: "2000000", usd: "2.00" },
  spent: { atomic: "0", usd: "0" },
  pending: { atomic: "0", usd: "0" },
  remaining: { atomic: "2000000", usd: "2.00" },
  remainingAfter: { atomic: "0", usd: after },
});
const BASE: PaymentUpdate = {
  paymentId: ID,
  status: "quoted",
  service: { url: "http://127.0.0.1:4021/weather", name: "Weather now" },
  amount: { atomic: "10000", usd: "0.01" },
  network: "eip155:8453",
  payTo: PAYEE,
};
const TYPED_DATA = {
  domain: {
    name: "USD Coin",
    version: "2",
    chainId: 8453,
    verifyingContract: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", // Base's USDC
  },
  types: {
    TransferWithAuthorization: [
      { name: "from", type: "address" },
      { name: "to", type: "address" },
      { name: "value", type: "uint256" },
      { name: "validAfter", type: "uint256" },
      { name: "validBefore", type: "uint256" },
      { name: "nonce", type: "bytes32" },
    ],
  },
  primaryType: "TransferWithAuthorization",
  message: {
    from: WALLET,
    to: PAYEE,
    value: "10000",
    validAfter: "0",
    validBefore: "1795000000",
    nonce: `0x${"ab".repeat(32)}`,
  },
};
const AWAITING = (typedData = TYPED_DATA): PaymentUpdate => ({
  ...BASE,
  status: "awaiting_approval",
  budget: { perTransaction: METER("0.49"), perRequest: METER("1.99"), daily: METER("4.99") },
  approval: {
    wallet: WALLET,
    expiresAt: "2026-11-25T10:00:50.000Z",
    sign: { kind: "evm-typed-data", method: "eth_signTypedData_v4", typedData },
  },
});
const FINISH = (finishReason: "approval-required" | "payment-complete" | "stop") => ({
  type: "finish" as const,
  finish: {
    finishReason,
    transactions: [],
    payments: [],
    usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 },
    model: "aimodel-2.0-flash-exp",
    provider: "offline",
    modelId: "offline-1",
  },
});
const ASKING: StreamEvent[] = [
  { type: "text", text: "Weather costs $0.01; please approve." },
  { type: "payment", payment: BASE },
  { type: "payment", payment: AWAITING() },
  FINISH("approval-required"),
];
const SETTLING: StreamEvent[] = [
  { type: "payment", payment: { ...BASE, status: "reserved" } },
  { type: "payment", payment: { ...BASE, status: "settled", transaction: "0xfeed", payer: WALLET } },
  { type: "text", text: "It is sunny." },
  FINISH("payment-complete"),
];
const DECLINED: StreamEvent[] = [
  { type: "payment", payment: { ...BASE, status: "rejected" } },
  { type: "text", text: "Not paid." },
  FINISH("stop"),
];

type Reply = StreamEvent[] | { status: number; problem: Record<string, unknown> };

/** A fetch that answers the n-th request with the n-th reply, and records each request's body. */
function fakeFetch(replies: Reply[]) {
  const bodies: Array<Record<string, unknown>> = [];
  const fetch = async (_url: unknown, init?: RequestInit): Promise<Response> => {
    bodies.push(JSON.parse(String(init?.body)));
    const reply = replies[bodies.length - 1];
    if (!reply) throw new Error(`no reply scripted for request ${bodies.length}`);
    if (!Array.isArray(reply))
      return new Response(JSON.stringify({ ...reply.problem, status: reply.status }), {
        status: reply.status,
        headers: { "Content-Type": "application/problem+json" },
      });
    return new Response(reply.map((event) => encodeLine(event)).join(""), {
      headers: { "Content-Type": "text/plain; charset=utf-8", "X-Chat-Protocol": "1" },
    });
  };
  return { fetch: fetch as typeof globalThis.fetch, bodies };
}

/** An EIP-1193 wallet that records what it is asked and answers (or throws) as told. */
function fakeWallet(sign: () => Promise<unknown> = async () => `0x${"ab".repeat(65)}`) {
  const calls: Array<{ method: string; params?: readonly unknown[] }> = [];
  const provider: Eip1193Provider = {
    async request(args) {
      calls.push(args);
      if (args.method === "eth_chainId") return "0x2105"; // 8453
      if (args.method === "eth_signTypedData_v4") return sign();
      throw new Error(`unexpected ${args.method}`);
    },
  };
  return { provider, calls };
}

/** `useChat`'s engine with the transport; `settled(n)` resolves once n more turns have finished. */
function chatWith(transport: PaymentChatTransport) {
  let finished = 0;
  const waiters: Array<{ at: number; resolve: () => void }> = [];
  const chat = new Chat<PaymentUIMessage>({
    transport,
    sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
    onFinish: () =>
      queueMicrotask(() => {
        finished += 1;
        for (const waiter of waiters) if (waiter.at <= finished) waiter.resolve();
      }),
    onError: () => {},
  });
  const settled = (turns = 1) =>
    new Promise<void>((resolve) => {
      waiters.push({ at: finished + turns, resolve });
    });
  return { chat, settled };
}

function toolPart(chat: Chat<PaymentUIMessage>) {
  const part = chat.messages.at(-1)?.parts.find((p) => p.type === `tool-${PAYMENT_TOOL}`);
  if (!part || part.type !== `tool-${PAYMENT_TOOL}`) throw new Error("no payment tool part");
  return part;
}

describe("payments awaiting the wallet as AI SDK tool-approval parts", () => {
  it("an awaiting_approval update is a tool part asking for approval, with a readable descriptor; the data part stays", async () => {
    const { fetch } = fakeFetch([ASKING]);
    const { chat } = chatWith(new PaymentChatTransport({ baseUrl: "http://svc.test", fetch }));
    await chat.sendMessage({ text: "Weather in Paris?" });
    const message = chat.messages.at(-1);
    expect(message?.parts.map((p) => p.type)).toEqual(["text", "data-payment", `tool-${PAYMENT_TOOL}`]);
    const part = toolPart(chat);
    expect(part).toMatchObject({
      toolCallId: ID,
      state: "approval-requested",
      title: "Pay $0.01 to Weather now",
      input: {
        paymentId: ID,
        amount: { atomic: "10000", usd: "0.01" },
        payTo: PAYEE,
        network: "eip155:8453",
      },
      approval: { id: ID },
    });
    const descriptor = part.approval?.descriptor as PaymentApprovalDescriptor;
    expect(descriptor).toMatchObject({
      kind: "x402-payment",
      amount: { usd: "0.01", atomic: "10000", token: "USD Coin" },
      payee: PAYEE,
      service: { url: BASE.service.url, name: "Weather now" },
      network: { id: "eip155:8453", name: "Base" },
      wallet: WALLET,
      expiresAt: "2026-11-25T10:00:50.000Z",
      budgetAfter: { perRequest: "1.99", daily: "4.99" },
      method: "eth_signTypedData_v4",
      mismatches: [],
    });
    expect(descriptor.summary).toBe(
      `Pay $0.01 in USD Coin to ${PAYEE} for Weather now (${BASE.service.url}) on Base, from ${WALLET}, before 10:00:50 UTC.`,
    );
    expect(message?.parts[1]).toMatchObject({ type: "data-payment", id: ID, data: AWAITING() });
  });

  it("approved: the wallet signs the typed data as sent, the answer resumes the turn, the part ends output-available", async () => {
    const { fetch, bodies } = fakeFetch([ASKING, SETTLING]);
    const wallet = fakeWallet();
    const { chat, settled } = chatWith(
      new PaymentChatTransport({ baseUrl: "http://svc.test", fetch, signer: { evm: wallet.provider } }),
    );
    await chat.sendMessage({ text: "Weather in Paris?" });
    const done = settled();
    await chat.addToolApprovalResponse({ id: ID, approved: true });
    await done;
    expect(wallet.calls).toEqual([
      { method: "eth_chainId" },
      { method: "eth_signTypedData_v4", params: [WALLET, JSON.stringify(TYPED_DATA)] },
    ]);
    expect(bodies).toHaveLength(2);
    expect(bodies[1]?.approval).toEqual({ paymentId: ID, signature: `0x${"ab".repeat(65)}` });
    expect(bodies[1]?.messages).toEqual([
      { role: "user", content: "Weather in Paris?" },
      { role: "assistant", content: "Weather costs $0.01; please approve." },
    ]);
    expect(chat.messages).toHaveLength(2); // resumed in the same assistant message
    expect(toolPart(chat)).toMatchObject({
      state: "output-available",
      output: { paymentId: ID, status: "settled", transaction: "0xfeed", payer: WALLET },
      approval: { id: ID, approved: true },
    });
    expect(chat.messages.at(-1)?.parts.find((p) => p.type === "data-payment")).toMatchObject({
      data: { status: "settled" },
    });
    expect(chat.status).toBe("ready");
  });

  it("paid without the wallet: one automatic approval, its reason in words, then the outcome", async () => {
    const budget = {
      perTransaction: METER("0.99"),
      perRequest: METER("1.99"),
      daily: METER("9.99"),
      approvalAbove: { atomic: "100000", usd: "0.10" },
    };
    const { fetch } = fakeFetch([
      [
        { type: "payment", payment: { ...BASE, budget } },
        { type: "payment", payment: { ...BASE, status: "reserved", budget } },
        { type: "payment", payment: { ...BASE, status: "settled", transaction: "0xfeed", payer: WALLET } },
        FINISH("payment-complete"),
      ],
    ]);
    const { chat, settled } = chatWith(new PaymentChatTransport({ baseUrl: "http://svc.test", fetch }));
    const done = settled();
    await chat.sendMessage({ text: "Weather in Paris?" });
    await done;
    const parts = chat.messages.at(-1)?.parts.filter((p) => p.type === `tool-${PAYMENT_TOOL}`) ?? [];
    expect(parts).toHaveLength(1);
    const part = toolPart(chat);
    expect(part.state).toBe("output-available");
    expect(part.approval).toMatchObject({ id: ID, approved: true, isAutomatic: true });
    expect(part.approval?.reason).toMatch(
      /^Approved automatically: \$0\.01 is within your \$2\.00 limit per payment, under your \$0\.10 threshold for the wallet; /,
    );
  });

  it("refused by the limits: one automatic denial with the refusal's code and words", async () => {
    const message = "The daily limit leaves $0.00; this payment is $0.01.";
    const { fetch } = fakeFetch([
      [
        { type: "payment", payment: BASE },
        { type: "payment", payment: { ...BASE, status: "refused", reason: "limit_exceeded", message } },
        FINISH("stop"),
      ],
    ]);
    const { chat, settled } = chatWith(new PaymentChatTransport({ baseUrl: "http://svc.test", fetch }));
    const done = settled();
    await chat.sendMessage({ text: "Weather in Paris?" });
    await done;
    const part = toolPart(chat);
    expect(part.state).toBe("output-denied");
    expect(part.approval).toMatchObject({ id: ID, approved: false, isAutomatic: true });
    expect(part.approval?.reason).toBe(`limit_exceeded: ${message}`);
  });

  it("declined: the answer is a rejection (nothing signed), the part ends output-denied", async () => {
    const { fetch, bodies } = fakeFetch([ASKING, DECLINED]);
    const wallet = fakeWallet();
    const { chat, settled } = chatWith(
      new PaymentChatTransport({ baseUrl: "http://svc.test", fetch, signer: { evm: wallet.provider } }),
    );
    await chat.sendMessage({ text: "Weather in Paris?" });
    const done = settled();
    await chat.addToolApprovalResponse({ id: ID, approved: false });
    await done;
    expect(wallet.calls).toEqual([]);
    expect(bodies[1]?.approval).toEqual({ paymentId: ID, reject: true });
    expect(toolPart(chat).state).toBe("output-denied");
  });

  it("the wallet declines to sign: nothing is sent, the part asks again with the reason, and a second approval settles", async () => {
    const { fetch, bodies } = fakeFetch([ASKING, SETTLING]);
    let asked = 0;
    const wallet = fakeWallet(async () => {
      asked += 1;
      // as injected wallets do: not an Error
      if (asked === 1) throw { code: 4001, message: "User rejected the request." };
      return `0x${"ab".repeat(65)}`;
    });
    const { chat, settled } = chatWith(
      new PaymentChatTransport({ baseUrl: "http://svc.test", fetch, signer: { evm: wallet.provider } }),
    );
    await chat.sendMessage({ text: "Weather in Paris?" });
    let done = settled();
    await chat.addToolApprovalResponse({ id: ID, approved: true });
    await done;
    expect(bodies).toHaveLength(1);
    expect(toolPart(chat).state).toBe("approval-requested");
    const descriptor = toolPart(chat).approval?.descriptor as PaymentApprovalDescriptor | undefined;
    expect(descriptor?.refusal).toBe("The wallet declined to sign the payment. Nothing was paid.");
    expect(descriptor?.paymentId).toBe(ID);
    expect(chat.error?.message).toBe("The wallet declined to sign the payment. Nothing was paid.");
    done = settled();
    await chat.addToolApprovalResponse({ id: ID, approved: true });
    await done;
    expect(bodies.map((b) => b.approval)).toEqual([
      undefined,
      { paymentId: ID, signature: `0x${"ab".repeat(65)}` },
    ]);
    expect(toolPart(chat)).toMatchObject({ state: "output-available", output: { status: "settled" } });
  });

  it.each([
    [
      "viem's wrapped 4001",
      Object.assign(new Error("User rejected the request."), { cause: { code: 4001 } }),
      "The wallet declined to sign the payment. Nothing was paid.",
    ],
    [
      "its own words without a full stop",
      new Error("the ledger device is locked"),
      "The wallet could not sign the payment: the ledger device is locked. Nothing was paid.",
    ],
  ])(
    "a wallet that fails (%s) asks again, its reason one sentence; declining then sends a rejection",
    async (_, failure, said) => {
      const { fetch, bodies } = fakeFetch([ASKING, DECLINED]);
      const wallet = fakeWallet(async () => {
        throw failure;
      });
      const { chat, settled } = chatWith(
        new PaymentChatTransport({ baseUrl: "http://svc.test", fetch, signer: { evm: wallet.provider } }),
      );
      await chat.sendMessage({ text: "Weather in Paris?" });
      let done = settled();
      await chat.addToolApprovalResponse({ id: ID, approved: true });
      await done;
      expect((toolPart(chat).approval?.descriptor as PaymentApprovalDescriptor | undefined)?.refusal).toBe(
        said,
      );
      done = settled();
      await chat.addToolApprovalResponse({ id: ID, approved: false });
      await done;
      expect(bodies.map((b) => b.approval)).toEqual([undefined, { paymentId: ID, reject: true }]);
      expect(toolPart(chat).state).toBe("output-denied");
    },
  );

  it("typed data that disagrees with the quote is never signed", async () => {
    const forged = { ...TYPED_DATA, message: { ...TYPED_DATA.message, value: "99990000" } };
    const asking = ASKING.map((e) =>
      e.type === "payment" && e.payment.status === "awaiting_approval"
        ? { ...e, payment: AWAITING(forged) }
        : e,
    );
    const { fetch, bodies } = fakeFetch([asking]);
    const wallet = fakeWallet();
    const { chat, settled } = chatWith(
      new PaymentChatTransport({ baseUrl: "http://svc.test", fetch, signer: { evm: wallet.provider } }),
    );
    await chat.sendMessage({ text: "Weather in Paris?" });
    expect(
      (toolPart(chat).approval?.descriptor as PaymentApprovalDescriptor | undefined)?.mismatches,
    ).toHaveLength(1);
    const done = settled();
    await chat.addToolApprovalResponse({ id: ID, approved: true });
    await done;
    expect(wallet.calls).toEqual([]);
    expect(bodies).toHaveLength(1);
    expect(toolPart(chat)).toMatchObject({ state: "output-error" });
    expect(toolPart(chat).errorText).toMatch(/^Not signed: the data to sign disagrees with the quote/);
  });

  it("no signer: an approval ends in an error part, unsigned and unsent", async () => {
    const { fetch, bodies } = fakeFetch([ASKING]);
    const { chat, settled } = chatWith(new PaymentChatTransport({ baseUrl: "http://svc.test", fetch }));
    await chat.sendMessage({ text: "Weather in Paris?" });
    const done = settled();
    await chat.addToolApprovalResponse({ id: ID, approved: true });
    await done;
    expect(bodies).toHaveLength(1);
    expect(toolPart(chat).errorText).toMatch(/No wallet was given/);
  });

  it("an answer the service refuses (approval_expired) ends the part in an error with its code", async () => {
    const expired = {
      status: 400,
      problem: { code: "approval_expired", title: "Approval expired", detail: "x" },
    };
    const { fetch, bodies } = fakeFetch([ASKING, expired]);
    const wallet = fakeWallet();
    const { chat, settled } = chatWith(
      new PaymentChatTransport({ baseUrl: "http://svc.test", fetch, signer: { evm: wallet.provider } }),
    );
    await chat.sendMessage({ text: "Weather in Paris?" });
    const done = settled();
    await chat.addToolApprovalResponse({ id: ID, approved: true });
    await done;
    expect(bodies).toHaveLength(2);
    expect(toolPart(chat).state).toBe("output-error");
    expect(toolPart(chat).errorText).toMatch(/\(approval_expired\)$/);
    // The payment's card says expired, so no Approve button stays on a dead payment.
    const payments = chat.messages.flatMap((m) => m.parts.filter((p) => p.type === "data-payment"));
    expect(payments).toHaveLength(1);
    expect(payments[0]).toMatchObject({ id: ID, data: { status: "expired", paymentId: ID } });
    expect((payments[0] as { data: Record<string, unknown> }).data.approval).toBeUndefined();
  });

  it("an answer refused while the payment still waits (503): the part asks again, and a second approval settles", async () => {
    const unavailable = {
      status: 503,
      problem: { code: "service_unavailable", title: "Unavailable", detail: "x" },
    };
    const { fetch, bodies } = fakeFetch([ASKING, unavailable, SETTLING]);
    const wallet = fakeWallet();
    const { chat, settled } = chatWith(
      new PaymentChatTransport({ baseUrl: "http://svc.test", fetch, signer: { evm: wallet.provider } }),
    );
    await chat.sendMessage({ text: "Weather in Paris?" });
    let done = settled();
    await chat.addToolApprovalResponse({ id: ID, approved: true });
    await done;
    expect(toolPart(chat).state).toBe("approval-requested");
    const refusal = (toolPart(chat).approval?.descriptor as PaymentApprovalDescriptor | undefined)?.refusal;
    expect(refusal).toMatch(/\(service_unavailable\)$/);
    expect(chat.error?.message).toBe(refusal);
    done = settled();
    await chat.addToolApprovalResponse({ id: ID, approved: true });
    await done;
    expect(bodies.map((b) => b.approval)).toEqual([
      undefined,
      { paymentId: ID, signature: `0x${"ab".repeat(65)}` },
      { paymentId: ID, signature: `0x${"ab".repeat(65)}` },
    ]);
    expect(toolPart(chat)).toMatchObject({ state: "output-available", output: { status: "settled" } });
  });

  it("a generic sign function answers; an answer for another payment is never sent", async () => {
    const { fetch, bodies } = fakeFetch([ASKING]);
    const { chat, settled } = chatWith(
      new PaymentChatTransport({
        baseUrl: "http://svc.test",
        fetch,
        signer: async () => ({ paymentId: "pay_other", signature: "0x01" }),
      }),
    );
    await chat.sendMessage({ text: "Weather in Paris?" });
    const done = settled();
    await chat.addToolApprovalResponse({ id: ID, approved: true });
    await done;
    expect(bodies).toHaveLength(1);
    // The payment still waits: the part asks again (it can be declined), the reason in its descriptor.
    expect(toolPart(chat).state).toBe("approval-requested");
    expect((toolPart(chat).approval?.descriptor as PaymentApprovalDescriptor | undefined)?.refusal).toMatch(
      /another payment/,
    );
  });

  it("two payments waiting: useChat sends once both are answered, and the transport answers one per request", async () => {
    const second = (u: PaymentUpdate): PaymentUpdate => ({ ...u, paymentId: "pay_2" });
    const asking: StreamEvent[] = [
      { type: "payment", payment: AWAITING() },
      { type: "payment", payment: second(AWAITING()) },
      FINISH("approval-required"),
    ];
    const settles = (u: PaymentUpdate): StreamEvent[] => [
      { type: "payment", payment: { ...u, status: "settled", transaction: "0xfeed" } },
      FINISH("payment-complete"),
    ];
    const declines: StreamEvent[] = [
      { type: "payment", payment: second({ ...BASE, status: "rejected" }) },
      FINISH("stop"),
    ];
    const { fetch, bodies } = fakeFetch([asking, settles(BASE), declines]);
    const wallet = fakeWallet();
    const { chat, settled } = chatWith(
      new PaymentChatTransport({ baseUrl: "http://svc.test", fetch, signer: { evm: wallet.provider } }),
    );
    await chat.sendMessage({ text: "Weather and news?" });
    await chat.addToolApprovalResponse({ id: ID, approved: true });
    expect(bodies).toHaveLength(1); // one part still asks: nothing sent yet
    const done = settled(2);
    await chat.addToolApprovalResponse({ id: "pay_2", approved: false });
    await done;
    expect(bodies.map((b) => b.approval)).toEqual([
      undefined,
      { paymentId: ID, signature: `0x${"ab".repeat(65)}` },
      { paymentId: "pay_2", reject: true },
    ]);
    const states = chat.messages
      .at(-1)
      ?.parts.flatMap((p) => (p.type === `tool-${PAYMENT_TOOL}` ? [p.state] : []));
    expect(states).toEqual(["output-available", "output-denied"]);
  });

  it("approvalParts: false keeps only the data parts", async () => {
    const { fetch } = fakeFetch([ASKING]);
    const transport = new PaymentChatTransport({ baseUrl: "http://svc.test", fetch, approvalParts: false });
    const stream = await transport.sendMessages({
      trigger: "submit-message",
      chatId: "c",
      messageId: undefined,
      messages: [{ id: "u", role: "user", parts: [{ type: "text", text: "hi" }] }],
      abortSignal: undefined,
    });
    const types: UIMessageChunk["type"][] = [];
    const reader = stream.getReader();
    for (let next = await reader.read(); !next.done; next = await reader.read()) types.push(next.value.type);
    expect(types).not.toContain("tool-approval-request");
    expect(types.filter((t) => t === "data-payment")).toHaveLength(2);
  });
});
