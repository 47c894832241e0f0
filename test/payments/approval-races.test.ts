/**
 * Approval in the user's wallet, raced: answers racing each other, the reconciler, the ledger and
 * the asking turn that is still streaming. Run against the real devnet in process.
 * Tests whose comment says PROBLEM reproduced a problem found here, since fixed (see each); the
 * others pin the safe behaviour. One of the approval-* attack files, one per attacker;
 * the shared set-up is test/payments/approval-attack.ts.
 */
import { describe, expect, it } from "vitest";
import type { Ledger } from "../../src/payments/index.js";
import {
  booted,
  devnet,
  evmUser,
  gate,
  ledger,
  models,
  post,
  proxy,
  resumeBody,
  signEvm,
  today,
  useApprovalAttack,
  within,
} from "./approval-attack.js";
import {
  type Awaiting,
  awaiting,
  type ChatResult,
  chat,
  evmBalances,
  priceOf,
  problem,
  readChat,
  serviceUrl,
} from "./harness.js";

useApprovalAttack();

describe("races", () => {
  /*
   * PROBLEM 2 (status; fixed: the rejection applies only to a row still awaiting approval, else
   * the client hears what the row is now): a rejection racing an approval. `resume` reads the row (awaiting),
   * then reads the budget; if the approval's `approve_payment` moves the row to `submitted` in between,
   * `run.reject()` -> `ledger.transition(.., "rejected")` throws IllegalTransitionError, which is not an
   * AppError: the client gets 500 `internal` (and the log an error) instead of 400 `approval_used`. The same
   * happens when the reconciler's sweep expires the row in that window. The budget read is held here to make
   * the window certain.
   */
  it("a rejection that loses the race to an approval answers 400 approval_used (it was 500)", async () => {
    const { first, ask } = await (async () => {
      const r = await chat(booted.running, { wallet: evmUser });
      return { first: r, ask: awaiting(r) };
    })();
    expect(first.finish.finishReason).toBe("approval-required");
    const signature = await signEvm(ask);
    const hold = gate();
    const reached = gate();
    const target = ledger();
    const original = target.budget.bind(target);
    let once = true;
    target.budget = async (...args: Parameters<Ledger["budget"]>) => {
      if (once) {
        once = false;
        reached.open();
        await hold.promise;
      }
      return original(...args);
    };
    try {
      const rejecting = post(resumeBody(evmUser, { paymentId: ask.paymentId, reject: true }));
      await reached.promise;
      const approved = await readChat(
        await post(resumeBody(evmUser, { paymentId: ask.paymentId, signature })),
      );
      expect(approved.finish.finishReason).toBe("payment-complete");
      hold.open();
      const rejected = await rejecting;
      expect(await problem(rejected)).toMatchObject({ status: 400, code: "approval_used" });
    } finally {
      hold.open();
      Reflect.deleteProperty(target, "budget");
    }
  });

  // Found by a black-box run: the page's copy of the answer the chat had sent got 400 approval_used.
  it("the chat's answer sent again from the approval page replays the payment, pays nothing more", async () => {
    const price = priceOf(devnet, "weather");
    const r = await chat(booted.running, { wallet: evmUser });
    const ask = awaiting(r);
    const signature = await signEvm(ask);
    const before = await evmBalances(devnet, "user");
    const approved = await readChat(await post(resumeBody(evmUser, { paymentId: ask.paymentId, signature })));
    expect(approved.finish.finishReason).toBe("payment-complete");
    const fromPage = await booted.running.service.app.request(`/api/approvals/${ask.paymentId}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ signature, walletAddress: evmUser }),
    });
    expect(fromPage.status).toBe(200);
    expect(fromPage.headers.get("idempotent-replayed")).toBe("true");
    expect(await fromPage.json()).toMatchObject({ paymentId: ask.paymentId, status: "settled" });
    const after = await evmBalances(devnet, "user");
    expect(before.payer - after.payer).toBe(price);
  });

  it("many answers at once (same answer x4, and the hex-case variants): one transfer on chain", async () => {
    const price = priceOf(devnet, "weather");
    const r = await chat(booted.running, { wallet: evmUser });
    const ask = awaiting(r);
    const signature = await signEvm(ask);
    const upper = `0x${signature.slice(2).toUpperCase()}`;
    const mixed = `0x${signature.slice(2, 60).toUpperCase()}${signature.slice(60)}`;
    const before = await evmBalances(devnet, "user");
    const bodies = [signature, signature, signature, signature, upper, mixed].map((s) =>
      resumeBody(evmUser, { paymentId: ask.paymentId, signature: s }),
    );
    const responses = await Promise.all(bodies.map((b) => post(b)));
    const statuses = responses.map((x) => x.status);
    const texts = await Promise.all(responses.map((x) => x.text()));
    for (const s of statuses) expect([200, 400, 409]).toContain(s);
    expect(texts.filter((t) => t.includes('"status":"settled"')).length).toBeGreaterThanOrEqual(1);
    const after = await evmBalances(devnet, "user");
    expect(before.payer - after.payer).toBe(price);
    expect((await ledger().get(ask.paymentId))?.status).toBe("settled");
  });

  it("approve and reject at once: exactly one wins, never both, never a 5xx when reject comes first", async () => {
    const price = priceOf(devnet, "weather");
    const r = await chat(booted.running, { wallet: evmUser });
    const ask = awaiting(r);
    const signature = await signEvm(ask);
    const before = await evmBalances(devnet, "user");
    const [rej, app] = await Promise.all([
      post(resumeBody(evmUser, { paymentId: ask.paymentId, reject: true })),
      post(resumeBody(evmUser, { paymentId: ask.paymentId, signature })),
    ]);
    const [rejText, appText] = [await rej.text(), await app.text()];
    const row = await ledger().get(ask.paymentId);
    const moved = before.payer - (await evmBalances(devnet, "user")).payer;
    if (row?.status === "rejected") {
      expect(moved).toBe(0n);
      expect(app.status).toBe(400);
      expect(appText).toContain("approval_used");
      expect(rej.status).toBe(200);
    } else {
      expect(row?.status).toBe("settled");
      expect(moved).toBe(price);
      expect(app.status).toBe(200);
      // (may be 500 by PROBLEM 2 when the timing is unlucky; 400 when the status was read after)
      expect(rej.status).not.toBe(200);
      expect(rejText).not.toContain('"status":"rejected"');
    }
  });

  it("the reconciler expires a payment: a late approval or rejection gets 400 approval_expired", async () => {
    const r = await chat(booted.running, { wallet: evmUser });
    const ask = awaiting(r);
    const signature = await signEvm(ask);
    const payments = booted.running.payments;
    if (!payments) throw new Error("payments are off");
    booted.clock.jumpTo(new Date(ask.approval.expiresAt).getTime() + 1000);
    try {
      await payments.reconciler.sweep();
    } finally {
      booted.clock.reset();
    }
    expect((await ledger().get(ask.paymentId))?.status).toBe("expired");
    const late = await post(resumeBody(evmUser, { paymentId: ask.paymentId, signature }));
    expect(await problem(late)).toMatchObject({ status: 400, code: "approval_expired" });
    const reject = await post(resumeBody(evmUser, { paymentId: ask.paymentId, reject: true }));
    expect(await problem(reject)).toMatchObject({ status: 400, code: "approval_expired" });
  });

  it("an approval reaching approve_payment after the expiry (checks took long) is refused 400 approval_expired", async () => {
    const r = await chat(booted.running, { wallet: evmUser });
    const ask = awaiting(r);
    const signature = await signEvm(ask);
    const target = ledger();
    const original = target.approve.bind(target);
    target.approve = (input) =>
      original({ ...input, now: new Date(new Date(ask.approval.expiresAt).getTime() + 1000) });
    try {
      const late = await post(resumeBody(evmUser, { paymentId: ask.paymentId, signature }));
      expect(await problem(late)).toMatchObject({ status: 400, code: "approval_expired" });
    } finally {
      Reflect.deleteProperty(target, "approve");
    }
    expect((await ledger().get(ask.paymentId))?.status).toBe("awaiting_approval");
  });

  it("the store fails at approve_payment: 503 store_unavailable, nothing sent, the same answer works later", async () => {
    const price = priceOf(devnet, "weather");
    const r = await chat(booted.running, { wallet: evmUser });
    const ask = awaiting(r);
    const signature = await signEvm(ask);
    const target = ledger();
    const { AppError } = await import("../../src/errors/index.js");
    target.approve = async () => {
      throw new AppError("store_unavailable", "The payment ledger is unavailable.");
    };
    const before = await evmBalances(devnet, "user");
    try {
      const down = await post(resumeBody(evmUser, { paymentId: ask.paymentId, signature }));
      const body = await problem(down);
      expect(body).toMatchObject({ status: 503, code: "store_unavailable" });
      expect(JSON.stringify(body)).not.toContain(signature.slice(2));
    } finally {
      Reflect.deleteProperty(target, "approve");
    }
    expect(await evmBalances(devnet, "user")).toEqual(before);
    const again = await readChat(await post(resumeBody(evmUser, { paymentId: ask.paymentId, signature })));
    expect(again.finish.finishReason).toBe("payment-complete");
    expect(before.payer - (await evmBalances(devnet, "user")).payer).toBe(price);
  });

  it("the settlement cannot be recorded: streamed unknown, the row stays pending (counted), the reconciler settles it", async () => {
    const price = priceOf(devnet, "weather");
    const r = await chat(booted.running, { wallet: evmUser });
    const ask = awaiting(r);
    const signature = await signEvm(ask);
    const target = ledger();
    const original = target.transition.bind(target);
    const { AppError } = await import("../../src/errors/index.js");
    target.transition = async (id, to, fields, now) => {
      if (id === ask.paymentId && to === "settled") throw new AppError("store_unavailable", "down");
      return original(id, to, fields, now);
    };
    const spentBefore = await today(evmUser);
    let result: ChatResult;
    try {
      result = await readChat(await post(resumeBody(evmUser, { paymentId: ask.paymentId, signature })));
    } finally {
      Reflect.deleteProperty(target, "transition");
    }
    expect(result.payments.at(-1)?.status).toBe("unknown");
    expect(result.raw).not.toMatch(/store_unavailable.*select|Failed query/i);
    const row = await ledger().get(ask.paymentId);
    expect(["submitted", "unknown"]).toContain(row?.status);
    expect((await today(evmUser)) - spentBefore).toBe(price);
    await booted.running.payments?.reconciler.resolve(ask.paymentId);
    expect((await ledger().get(ask.paymentId))?.status).toBe("settled");
  });
});

describe("approval while the asking turn is still streaming", () => {
  it("the payment is approved and paid once while turn 1 still runs another tool; turn 1 ends cleanly", async () => {
    proxy.reset();
    const price = priceOf(devnet, "weather");
    const held = gate();
    proxy.onProbe = async () => {
      await within(held.promise, 20_000);
      return { status: 503, body: "down" };
    };
    const message = models.script("two-at-once", [
      [
        {
          toolName: "pay_and_fetch",
          input: { url: serviceUrl(devnet, "weather"), method: "GET", query: { city: "Paris" } },
        },
        {
          toolName: "pay_and_fetch",
          input: { url: `${proxy.url}${proxy.path}`, method: "GET", query: { city: "Lyon" } },
        },
      ],
    ]);
    const firstResponse = await post({
      messages: [{ role: "user", content: message }],
      walletAddress: evmUser,
    });
    const reader = firstResponse.body?.getReader();
    if (!reader) throw new Error("no body");
    const decoder = new TextDecoder();
    let seen = "";
    let ask: Awaiting | undefined;
    while (!ask) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`turn 1 ended before asking: ${seen.slice(0, 500)}`);
      seen += decoder.decode(value, { stream: true });
      for (const line of seen.split("\n")) {
        if (line.startsWith("p:") && line.includes('"awaiting_approval"'))
          ask = JSON.parse(line.slice(2)) as Awaiting;
      }
    }
    const before = await evmBalances(devnet, "user");
    const signature = await signEvm(ask);
    const paid = await readChat(await post(resumeBody(evmUser, { paymentId: ask.paymentId, signature })));
    expect(paid.finish.finishReason).toBe("payment-complete");
    held.open();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      seen += decoder.decode(value, { stream: true });
    }
    const lastLine = seen.trimEnd().split("\n").at(-1) ?? "";
    expect(lastLine.startsWith("d:")).toBe(true);
    expect(before.payer - (await evmBalances(devnet, "user")).payer).toBe(price);
    expect((await ledger().get(ask.paymentId))?.status).toBe("settled");
    // The same answer again, with another conversation and model: replayed, not paid again.
    const other = await post({
      ...resumeBody(evmUser, { paymentId: ask.paymentId, signature }, { model: "aimodel-1.5-pro" }),
      messages: [{ role: "user", content: "something else entirely" }],
    });
    expect(other.headers.get("idempotent-replayed")).toBe("true");
    await other.text();
    expect(before.payer - (await evmBalances(devnet, "user")).payer).toBe(price);
  }, 60_000);
});
