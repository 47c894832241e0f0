/**
 * A tab through `useChat` (docs/clients.md, "Tabs"): the AI SDK's own `Chat` (what `useChat` wraps)
 * with `PaymentChatTransport({ tab })`, against the real service and devnet. The first question
 * brings one approval part, "Pay $0.03 to a tab for your agent"; approved (the `user` wallet signs, the service does not hold
 * its key), the tab is funded and the question answered, paid from the tab; later questions' payments
 * are approved automatically, "Paid from your tab". Declined, no tab is opened and the payment asks.
 */
import { Chat } from "@ai-sdk/react";
import { lastAssistantMessageIsCompleteWithApprovalResponses } from "ai";
import type { PrivateKeyAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PaymentChatTransport, type PaymentUIMessage } from "../../src/client/ai.js";
import { PAYMENT_TOOL, signEvmApproval } from "../../src/client/index.js";
import { evmUsdcBalance } from "../../src/devnet/testing/index.js";
import { type Booted, boot, priceOf, useTestDevnet, WEATHER_PARIS } from "./harness.js";
import { TAB_ENV, userAccount } from "./tab-helpers.js";

const devnet = useTestDevnet();
let user: PrivateKeyAccount;
let b: Booted;

beforeAll(async () => {
  user = userAccount(devnet);
  b = await boot(devnet, { store: "pglite", env: TAB_ENV });
});
afterAll(() => b?.close());

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
    new Promise<void>((resolve) => waiters.push({ at: finished + turns, resolve }));
  /** Ask a question, answer the tab's opening part, and wait for the turn; the opening part. */
  const answerOpening = async (approved: boolean) => {
    await chat.sendMessage({ text: WEATHER_PARIS });
    const [opening] = toolParts(chat);
    const done = settled();
    await chat.addToolApprovalResponse({ id: opening?.toolCallId ?? "", approved });
    await done;
    return opening;
  };
  return { chat, settled, answerOpening };
}

const toolParts = (chat: Chat<PaymentUIMessage>) =>
  (chat.messages.at(-1)?.parts ?? []).filter((p) => p.type === `tool-${PAYMENT_TOOL}`) as Array<{
    toolCallId: string;
    state: string;
    title?: string;
    approval?: { id: string; isAutomatic?: boolean; reason?: string };
  }>;

/** The service, as fetch; `lose(path)` answers that request but loses its answer (the connection dropped). */
function serviceFetch(lose?: (path: string) => boolean): typeof fetch {
  return (async (url: string | URL | Request, init?: RequestInit) => {
    const response = await b.running.service.app.request(String(url), init);
    if (lose?.(new URL(String(url)).pathname)) throw new TypeError("fetch failed");
    return response;
  }) as typeof fetch;
}

function transport(fetch = serviceFetch()) {
  return new PaymentChatTransport({
    baseUrl: "http://127.0.0.1:3000",
    fetch,
    fields: { walletAddress: user.address },
    signer: (update) => signEvmApproval(update, user),
    tab: { amount: "0.03" },
  });
}

describe("a tab through useChat", () => {
  it("one approval part opens it; the question and the next are paid from it automatically", async () => {
    const price = priceOf(devnet, "weather");
    const before = await evmUsdcBalance(devnet, user.address);
    const paying = transport();
    const { chat, settled } = chatWith(paying);
    await chat.sendMessage({ text: WEATHER_PARIS });
    const [opening] = toolParts(chat);
    expect(opening).toMatchObject({
      state: "approval-requested",
      title: "Pay $0.03 to a tab for your agent",
    });
    expect(paying.tab.state.status).toBe("asking");

    const done = settled();
    await chat.addToolApprovalResponse({ id: opening?.toolCallId ?? "", approved: true });
    await done;
    expect(paying.tab.state.status).toBe("open");
    const parts = toolParts(chat);
    expect(parts[0]).toMatchObject({ toolCallId: opening?.toolCallId, state: "output-available" });
    const paid = parts.find((p) => p.toolCallId !== opening?.toolCallId);
    expect(paid).toMatchObject({ state: "output-available", approval: { isAutomatic: true } });
    expect(paid?.approval?.reason).toMatch(/^Paid from your tab: \$0\.02 left of \$0\.03/);

    const next = settled();
    await chat.sendMessage({ text: WEATHER_PARIS });
    await next;
    const again = toolParts(chat);
    expect(again).toHaveLength(1);
    expect(again[0]?.approval?.reason).toMatch(/^Paid from your tab: \$0\.01 left of \$0\.03/);

    const closed = await paying.tab.close();
    expect(closed).toMatchObject({
      status: "closed",
      refunded: { atomic: (30_000n - 2n * price).toString() },
    });
    // Ledger = chain: two payments, one signature.
    expect(before - (await evmUsdcBalance(devnet, user.address))).toBe(2n * price);
  });

  it("declined: no tab, and the question's payment asks the wallet as before", async () => {
    const before = await evmUsdcBalance(devnet, user.address);
    const paying = transport();
    const { chat, settled, answerOpening } = chatWith(paying);
    const opening = await answerOpening(false);
    expect(paying.tab.state.status).toBe("none");
    const parts = toolParts(chat);
    expect(parts[0]).toMatchObject({ toolCallId: opening?.toolCallId, state: "output-denied" });
    expect(parts.find((p) => p.toolCallId !== opening?.toolCallId)).toMatchObject({
      state: "approval-requested",
    });
    expect(await evmUsdcBalance(devnet, user.address)).toBe(before);
    // Said no: the next question is not asked again.
    const next = settled();
    await chat.sendMessage({ text: WEATHER_PARIS });
    await next;
    expect(toolParts(chat).some((p) => p.title === "Pay $0.03 to a tab for your agent")).toBe(false);
    expect(paying.tab.state).toMatchObject({ status: "none", declined: true });
    // askAgain(): the next question asks once more.
    paying.tab.askAgain();
    await chat.sendMessage({ text: WEATHER_PARIS });
    expect(toolParts(chat).map((p) => p.title)).toEqual(["Pay $0.03 to a tab for your agent"]);
    expect(paying.tab.state.status).toBe("asking");
  });

  it("a funding whose answer was lost is read again: the next question pays from the tab", async () => {
    let lost = 0;
    const paying = transport(serviceFetch((path) => path.endsWith("/fund") && lost++ === 0));
    const { chat, settled, answerOpening } = chatWith(paying);
    await answerOpening(true);
    // The tab was funded, but the transport does not know it yet: it keeps the token and checks.
    expect(paying.tab.state.status).toBe("checking");
    const next = settled();
    await chat.sendMessage({ text: WEATHER_PARIS });
    await next;
    expect(paying.tab.state.status).toBe("open");
    const paid = toolParts(chat);
    expect(paid).toHaveLength(1);
    expect(paid[0]?.approval?.reason).toMatch(/^Paid from your tab/);
    expect(await paying.tab.close()).toMatchObject({ status: "closed" });
  });
});
