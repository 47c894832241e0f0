/**
 * The SDK, the useChat transport and the terminal chat against the whole service and the real
 * local devnet: payments settled with server-held keys (the `payer` wallet and the dev token),
 * and payments approved, or rejected, in the user's own wallet (the `user` wallet, whose key only
 * the client holds).
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { createKeyPairSignerFromBytes } from "@solana/kit";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "../../src/cli/main.js";
import { approvalBody, PaymentChatTransport, type PaymentUIMessage } from "../../src/client/ai.js";
import {
  ChatClient,
  type ChatHttpError,
  type ChatRequestBody,
  type PaymentUpdate,
  rejectApproval,
  resumeBody,
  signEvmApproval,
  signSolanaApproval,
} from "../../src/client/index.js";
import { walletAddress } from "../../src/devnet/testing/index.js";
import { scratchDir } from "../helpers.js";
import {
  type Booted,
  boot,
  evmBalances,
  secretStrings,
  useTestDevnet,
  WEATHER_PARIS,
} from "../payments/harness.js";
import { memoryIo, type Served, serve, TestChat } from "./support.js";

const devnet = useTestDevnet();
let booted: Booted;
let served: Served;
let token: string;
let payer: string;
let user: string;
let solanaUser: string;
let solanaNetwork: string;

beforeAll(async () => {
  booted = await boot(devnet, { store: "pglite" });
  served = await serve(booted.running);
  token = devnet.manifest.devToken;
  payer = walletAddress(devnet, "evm", "payer");
  user = walletAddress(devnet, "evm", "user");
  solanaUser = walletAddress(devnet, "solana", "user");
  solanaNetwork = devnet.manifest.solana?.network ?? "";
});

afterAll(async () => {
  await served?.close();
});

const ask = (wallet: string, extra: Partial<ChatRequestBody> = {}): ChatRequestBody => ({
  messages: [{ role: "user", content: WEATHER_PARIS }],
  walletAddress: wallet,
  ...extra,
});

function evmUserKey(): `0x${string}` {
  const key = devnet.secrets.evm.user;
  if (!key) throw new Error("the devnet has no user wallet");
  return key;
}

describe("SDK", () => {
  it("pays with a server-held key: quoted with the budget, settled with its transaction, payment-complete", async () => {
    const client = new ChatClient({ baseUrl: served.url, token });
    const result = await (await client.chat(ask(payer))).collect();
    expect(result.finish.finishReason).toBe("payment-complete");
    const [payment] = result.payments;
    expect(payment).toMatchObject({
      status: "settled",
      transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/),
    });
    const quoted = result.updates.find((u) => u.status === "quoted");
    expect(quoted?.budget?.perRequest.remainingAfter?.usd).toBe("1.99");
    expect(result.finish.transactionHash).toBe(payment?.transaction);
  });

  it("approves in the user's wallet: awaiting_approval, signed with viem, resumed, settled on chain", async () => {
    const client = new ChatClient({ baseUrl: served.url });
    const before = await evmBalances(devnet, "user");
    const body = ask(user);
    const first = await (await client.chat(body)).collect();
    expect(first.finish.finishReason).toBe("approval-required");
    expect(first.finish.approvals?.map((a) => a.paymentId)).toEqual(
      first.awaitingApproval.map((u) => u.paymentId),
    );
    const waiting = first.awaitingApproval[0] as PaymentUpdate;
    expect(waiting.approval?.sign.kind).toBe("evm-typed-data");

    const answer = await signEvmApproval(waiting, privateKeyToAccount(evmUserKey()));
    const resumed = resumeBody(body, first.text, answer);
    const second = await (await client.chat(resumed)).collect();
    expect(second.finish.finishReason).toBe("payment-complete");
    const settled = second.payments.find((p) => p.paymentId === waiting.paymentId);
    expect(settled).toMatchObject({ status: "settled", transaction: expect.stringMatching(/^0x/) });
    const after = await evmBalances(devnet, "user");
    expect(before.payer - after.payer).toBe(BigInt(waiting.amount?.atomic ?? "0"));

    // The same answer again replays the outcome (it never pays twice); another answer is refused, typed.
    const again = await client.chat(resumed);
    expect(again.replayed).toBe(true);
    expect((await again.collect()).finish.transactionHash).toBe(second.finish.transactionHash);
    expect((await evmBalances(devnet, "user")).payer).toBe(after.payer);
    const late = await client.reject(resumed, waiting.paymentId).catch((e: unknown) => e);
    expect(late).toMatchObject({ status: 400, code: "approval_used" });
    expect((late as ChatHttpError).problem.title).toBeTruthy();
  });

  it("approves with a bearer token too: a payment above approvalAbove asks even where the server holds a key", async () => {
    const client = new ChatClient({ baseUrl: served.url, token });
    const body = ask(payer, { spendingLimits: { approvalAbove: "0" } });
    const first = await (await client.chat(body)).collect();
    expect(first.finish.finishReason).toBe("approval-required");
    const waiting = first.awaitingApproval[0] as PaymentUpdate;
    const key = devnet.secrets.evm.payer;
    if (!key) throw new Error("no payer key");
    const answer = await signEvmApproval(waiting, privateKeyToAccount(key));
    const second = await (await client.chat(resumeBody(body, first.text, answer))).collect();
    expect(second.finish.finishReason).toBe("payment-complete");
  });

  it("rejects: the payment ends rejected and nothing is paid", async () => {
    const client = new ChatClient({ baseUrl: served.url });
    const before = await evmBalances(devnet, "user");
    const body = ask(user);
    const first = await (await client.chat(body)).collect();
    const waiting = first.awaitingApproval[0] as PaymentUpdate;
    const second = await (
      await client.chat(resumeBody(body, first.text, rejectApproval(waiting.paymentId)))
    ).collect();
    expect(second.payments.find((p) => p.paymentId === waiting.paymentId)?.status).toBe("rejected");
    expect((await evmBalances(devnet, "user")).payer).toBe(before.payer);
  });

  it("approves on Solana with a @solana/kit signer", async (ctx) => {
    const secret = devnet.secrets.solana.user;
    if (!devnet.manifest.solana || !secret) ctx.skip();
    const client = new ChatClient({ baseUrl: served.url });
    const body = ask(solanaUser, { spendingLimits: { allowedNetworks: [solanaNetwork] } });
    const first = await (await client.chat(body)).collect();
    expect(first.finish.finishReason).toBe("approval-required");
    const waiting = first.awaitingApproval[0] as PaymentUpdate;
    expect(waiting.approval?.sign.kind).toBe("solana-transaction");
    const signer = await createKeyPairSignerFromBytes(secret as Uint8Array);
    const answer = await signSolanaApproval(waiting, signer);
    const second = await (await client.approve(resumeBody(body, first.text, answer), answer)).collect();
    expect(second.finish.finishReason).toBe("payment-complete");
    expect(second.payments.find((p) => p.paymentId === waiting.paymentId)?.status).toBe("settled");
  });
});

describe("useChat transport", () => {
  it("a paid turn: one data-payment card per payment, settled in place; metadata payment-complete", async () => {
    const chat = new TestChat<PaymentUIMessage>({
      transport: new PaymentChatTransport({ baseUrl: served.url, token, fields: { walletAddress: payer } }),
    });
    await chat.sendMessage({ text: WEATHER_PARIS });
    expect(chat.status).toBe("ready");
    const answer = chat.messages[1];
    const cards = answer?.parts.filter((p) => p.type === "data-payment") ?? [];
    expect(cards).toHaveLength(1);
    expect(cards[0]).toMatchObject({
      data: { status: "settled", transaction: expect.stringMatching(/^0x/) },
    });
    expect(answer?.metadata?.finishReason).toBe("payment-complete");
  });

  it("an approval answered from the card: sign, sendMessage(undefined, approvalBody(answer)), the same message settles", async () => {
    const chat = new TestChat<PaymentUIMessage>({
      transport: new PaymentChatTransport({ baseUrl: served.url, fields: () => ({ walletAddress: user }) }),
    });
    await chat.sendMessage({ text: WEATHER_PARIS });
    const asked = chat.messages[1];
    expect(asked?.metadata?.finishReason).toBe("approval-required");
    const card = asked?.parts.find((p) => p.type === "data-payment");
    if (card?.type !== "data-payment") throw new Error("no card");
    expect(card.data.status).toBe("awaiting_approval");
    const answer = await signEvmApproval(card.data, privateKeyToAccount(evmUserKey()));
    await chat.sendMessage(undefined, approvalBody(answer));
    expect(chat.status).toBe("ready");
    expect(chat.messages).toHaveLength(2);
    const resumed = chat.messages[1];
    expect(resumed?.id).toBe(asked?.id);
    const cards = resumed?.parts.filter((p) => p.type === "data-payment") ?? [];
    expect(cards).toHaveLength(1);
    expect(cards[0]).toMatchObject({ id: card.id, data: { status: "settled" } });
    expect(resumed?.metadata?.finishReason).toBe("payment-complete");
  });
});

describe("terminal chat main()", () => {
  it("pays: live status lines end settled with the tx hash, exit 0, no secret shown", async () => {
    const m = memoryIo();
    const code = await main(
      ["chat", WEATHER_PARIS, "--url", served.url, "--token", token, "--wallet", payer],
      m.io,
    );
    expect(code).toBe(0);
    expect(m.err()).toMatch(
      /• .* \$0\.01 on Local EVM devnet · quoted · leaves \$1\.99 of \$2\.00 this request/,
    );
    expect(m.err()).toMatch(/✓ .* · settled, tx 0x[0-9a-f]{64}/);
    expect(m.err()).toContain("(payment-complete · 1 paid)");
    expect(m.out()).toContain("Paris");
    for (const secret of secretStrings(devnet).filter((s) => s !== token))
      expect(m.out() + m.err()).not.toContain(secret);
  });

  it("a limit refusal: refused with its reason, exit 4", async () => {
    const m = memoryIo();
    const code = await main(
      [
        "chat",
        WEATHER_PARIS,
        "--url",
        served.url,
        "--token",
        token,
        "--wallet",
        payer,
        "--per-transaction",
        "0.001",
      ],
      m.io,
    );
    expect(code).toBe(4);
    expect(m.err()).toContain("limit_exceeded");
  });

  it("approves with --key-file --yes as the user wallet: signs, resumes, settles, exit 0", async () => {
    const dir = scratchDir("chat-key");
    const keyFile = join(dir, "user.key");
    writeFileSync(keyFile, `${evmUserKey()}\n`, { mode: 0o600 });
    const m = memoryIo();
    const code = await main(
      ["chat", WEATHER_PARIS, "--url", served.url, "--key-file", keyFile, "--yes"],
      m.io,
    );
    expect(m.err()).toContain("Approval needed: $0.01");
    expect(m.err()).toContain("Signed. Resuming...");
    expect(m.err()).toMatch(/✓ .* · settled, tx 0x/);
    expect(code).toBe(0);
    expect(m.out() + m.err()).not.toContain(evmUserKey().slice(2));
  });

  it("with --key-file but nobody to answer y/n (one-shot, stdin not a terminal): signs nothing, says --yes would (8)", async () => {
    const dir = scratchDir("chat-key");
    const keyFile = join(dir, "user.key");
    writeFileSync(keyFile, `${evmUserKey()}\n`, { mode: 0o600 });
    const m = memoryIo();
    const code = await main(["chat", WEATHER_PARIS, "--url", served.url, "--key-file", keyFile], m.io);
    expect(code).toBe(8);
    expect(m.err()).toContain("Add --yes to sign with the key file without asking.");
    expect(m.err()).not.toContain("Signed. Resuming...");
    expect(m.out()).toContain("<SIGNATURE>");
  });

  it("approves on Solana with a solana-keygen key file: signs the transaction, settles, exit 0", async (ctx) => {
    const secret = devnet.secrets.solana.user;
    if (!devnet.manifest.solana || !secret) ctx.skip();
    const dir = scratchDir("chat-key");
    const keyFile = join(dir, "user.json");
    writeFileSync(keyFile, JSON.stringify([...(secret as Uint8Array)]), { mode: 0o600 });
    const m = memoryIo();
    const code = await main(
      [
        "chat",
        WEATHER_PARIS,
        "--url",
        served.url,
        "--key-file",
        keyFile,
        "--yes",
        "--networks",
        solanaNetwork,
      ],
      m.io,
    );
    expect(m.err()).toContain(`from ${solanaUser}`);
    expect(m.err()).toMatch(/✓ .* on Solana devnet · settled, tx [1-9A-HJ-NP-Za-km-z]{64,88}/);
    expect(code).toBe(0);
  });

  it("without a key: prints what to sign and the exact body to resume with (exit 8); that body, signed, settles", async () => {
    const m = memoryIo();
    const code = await main(["chat", WEATHER_PARIS, "--url", served.url, "--wallet", user], m.io);
    expect(code).toBe(8);
    const out = m.out();
    const typedData = JSON.parse(out.slice(out.indexOf("\n{") + 1, out.indexOf("\n}\n") + 2)) as {
      primaryType: string;
    };
    expect(typedData.primaryType).toBe("TransferWithAuthorization");
    const bodyLine = out.split("\n").find((l) => l.startsWith('{"') && l.includes("<SIGNATURE>"));
    expect(bodyLine).toBeTruthy();
    const body = JSON.parse(bodyLine ?? "{}") as ChatRequestBody & { approval: { paymentId: string } };
    expect(body.messages.at(-1)?.role).toBe("assistant");
    // Do what the instructions say: sign the typed data shown, put the signature in, POST the body.
    const update = {
      paymentId: body.approval.paymentId,
      status: "awaiting_approval",
      service: { url: "" },
      approval: {
        wallet: user,
        expiresAt: "",
        sign: { kind: "evm-typed-data", method: "eth_signTypedData_v4", typedData },
      },
    } as PaymentUpdate;
    const answer = await signEvmApproval(update, privateKeyToAccount(evmUserKey()));
    const response = await fetch(`${served.url}/api/chat`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: bodyLine?.replace("<SIGNATURE>", "signature" in answer ? answer.signature : ""),
    });
    expect(response.status).toBe(200);
    expect(await response.text()).toContain('"finishReason":"payment-complete"');
  });
});
