/**
 * The approval page's endpoints (docs/protocol.md#the-approval-page) on the real devnet. A chat turn (with
 * the devnet's bearer token) stops at a payment the `user` wallet must sign; the answer then comes from the
 * approval page: no bearer token, only the wallet's own signature. Checked in the answers, the ledger and on
 * chain.
 */
import {
  createKeyPairSignerFromBytes,
  getBase64EncodedWireTransaction,
  getTransactionDecoder,
  type Transaction,
} from "@solana/kit";
import type { PrivateKeyAccount } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toViemTypedData } from "../../src/client/index.js";
import { walletAddress } from "../../src/devnet/testing/index.js";
import type { WalletRequest } from "../../src/protocol/index.js";
import {
  type Awaiting,
  awaiting,
  type Booted,
  boot,
  chat,
  dropSchema,
  evmBalances,
  ledgerOf,
  priceOf,
  problem,
  STORES,
  secretStrings,
  signTypedDataOf,
  solanaBalances,
  useTestDevnet,
} from "./harness.js";

const devnet = useTestDevnet();
let user: PrivateKeyAccount;
let evmUser: string;
let solUser: string;
const token = () => devnet.manifest.devToken;

beforeAll(() => {
  const key = devnet.secrets.evm.user;
  if (!key) throw new Error("the devnet has no user wallet");
  user = privateKeyToAccount(key);
  evmUser = walletAddress(devnet, "evm", "user");
  solUser = walletAddress(devnet, "solana", "user");
});

async function signSolana(request: Awaiting): Promise<string> {
  const sign = request.approval.sign;
  const secret = devnet.secrets.solana.user;
  if (sign.kind !== "solana-transaction" || !secret) throw new Error("not a Solana approval");
  const signer = await createKeyPairSignerFromBytes(secret);
  const tx = getTransactionDecoder().decode(Buffer.from(sign.transaction, "base64")) as Transaction;
  const [signatures] = await signer.signTransactions([
    tx as Parameters<typeof signer.signTransactions>[0][number],
  ]);
  return getBase64EncodedWireTransaction({
    ...tx,
    signatures: { ...tx.signatures, ...signatures },
  } as Transaction);
}

describe.each(STORES)("the approval page's endpoints (%s)", (store) => {
  let booted: Booted;
  beforeAll(async () => {
    booted = await boot(devnet, { store });
  });
  afterAll(async () => {
    await booted?.close();
    await dropSchema(booted?.schema);
  });

  /** A turn of the devnet token's caller that stops for the user's wallet. */
  async function ask(wallet = evmUser): Promise<Awaiting> {
    return awaiting(await chat(booted.running, { wallet, token: token() }));
  }
  const page = (paymentId: string, body?: Record<string, unknown>, headers: Record<string, string> = {}) =>
    booted.running.service.app.request(`/api/approvals/${paymentId}`, {
      method: body ? "POST" : "GET",
      headers: { "content-type": "application/json", ...headers },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
  const payment = (paymentId: string, withToken = true) =>
    booted.running.service.app.request(`/api/payments/${paymentId}`, {
      headers: withToken ? { authorization: `Bearer ${token()}` } : {},
    });

  it("EVM: the page shows the terms, the wallet's signature settles it once, the caller reads the data", async () => {
    const price = priceOf(devnet, "weather");
    const before = await evmBalances(devnet, "user");
    const ask1 = await ask();
    const shown = await page(ask1.paymentId);
    expect(shown.status).toBe(200);
    const view = (await shown.json()) as Record<string, unknown>;
    expect(view).toMatchObject({
      paymentId: ask1.paymentId,
      status: "awaiting_approval",
      amount: { atomic: price.toString(), usd: "0.01" },
      token: expect.any(String),
      network: devnet.manifest.evm.network,
      networkName: "Local EVM devnet",
      payTo: ask1.payTo,
      service: { url: ask1.service.url, name: "Weather now" },
      wallet: evmUser,
      expiresAt: ask1.approval.expiresAt,
      approval: { wallet: evmUser, expiresAt: ask1.approval.expiresAt, sign: ask1.approval.sign },
    });
    for (const secret of secretStrings(devnet)) expect(JSON.stringify(view)).not.toContain(secret);

    const signature = await signTypedDataOf(ask1, user);
    const answered = await page(ask1.paymentId, { signature, walletAddress: evmUser });
    expect(answered.status).toBe(200);
    const outcome = (await answered.json()) as Record<string, unknown>;
    expect(outcome).toMatchObject({
      paymentId: ask1.paymentId,
      status: "settled",
      amount: { atomic: price.toString() },
    });
    expect(outcome.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    expect(JSON.stringify(outcome)).not.toMatch(/Paris|untrusted/);
    // Ledger = chain.
    const row = await ledgerOf(booted.running).get(ask1.paymentId);
    expect(row).toMatchObject({ status: "settled", txHash: outcome.transaction, caller: "devnet" });
    const after = await evmBalances(devnet, "user");
    expect(before.payer - after.payer).toBe(price);
    expect(after.merchant - before.merchant).toBe(price);

    // The caller (bearer identity) reads the service's answer; anyone else reads nothing.
    const read = await payment(ask1.paymentId);
    expect(read.status).toBe(200);
    expect(await read.json()).toMatchObject({
      status: "settled",
      data: { untrusted: true, body: expect.anything() },
    });
    expect((await payment(ask1.paymentId, false)).status).toBe(404);

    // The same answer again replays; nothing more moves. Another answer: used.
    const again = await page(ask1.paymentId, { signature });
    expect(again.status).toBe(200);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(await again.json()).toMatchObject({ status: "settled", transaction: outcome.transaction });
    // The same signature with `v` as 0/1 (both are accepted) is the same answer: it replays too.
    const v = Number.parseInt(signature.slice(130), 16) - 27;
    const vLow = `${signature.slice(0, 130)}0${v}` as `0x${string}`;
    const replayedLow = await page(ask1.paymentId, { signature: vLow });
    expect([replayedLow.status, replayedLow.headers.get("idempotent-replayed")]).toEqual([200, "true"]);
    const other = await signTypedDataOf(ask1, user, (m) => {
      m.value = "1";
    });
    expect(await problem(await page(ask1.paymentId, { signature: other }))).toMatchObject({
      status: 400,
      code: "approval_used",
      paymentStatus: "settled",
    });
    expect(await evmBalances(devnet, "user")).toEqual(after);
    expect(await (await page(ask1.paymentId)).json()).not.toHaveProperty("approval");
  });

  it("refuses another wallet, a tampered or foreign signature, a decline, an expired window and unknown ids", async () => {
    const before = await evmBalances(devnet, "user");
    const ask1 = await ask();
    const payerKey = devnet.secrets.evm.payer;
    if (!payerKey) throw new Error("no payer key");
    const signature = await signTypedDataOf(ask1, user);
    const code = async (body: Record<string, unknown>, id = ask1.paymentId) =>
      (await problem(await page(id, body))).code;
    expect(await code({ signature, walletAddress: walletAddress(devnet, "evm", "payer") })).toBe(
      "approval_wrong_wallet",
    );
    expect(await code({ signature: await signTypedDataOf(ask1, privateKeyToAccount(payerKey)) })).toBe(
      "approval_invalid",
    );
    const tampered = await signTypedDataOf(ask1, user, (m) => {
      m.value = String(BigInt(String(m.value)) * 100n);
    });
    expect(await code({ signature: tampered })).toBe("approval_invalid");
    expect(await code({ reject: true })).toBe("approval_invalid");
    expect(await code({ signature: "not hex" })).toBe("approval_invalid");
    expect(await code({ signature }, "pay_00000000-0000-4000-8000-000000000000")).toBe("approval_not_found");
    expect(await code({ signature }, "nonsense")).toBe("approval_not_found");
    expect((await page("pay_00000000-0000-4000-8000-000000000000")).status).toBe(404);
    expect((await ledgerOf(booted.running).get(ask1.paymentId))?.status).toBe("awaiting_approval");

    booted.clock.jumpTo(Date.parse(ask1.approval.expiresAt) + 1000);
    try {
      expect(await (await page(ask1.paymentId)).json()).toMatchObject({ status: "expired" });
      expect(await code({ signature })).toBe("approval_expired");
    } finally {
      booted.clock.reset();
    }
    expect((await ledgerOf(booted.running).get(ask1.paymentId))?.status).toBe("expired");
    expect(await evmBalances(devnet, "user")).toEqual(before);
  });

  it("EVM: a decline is signed by the wallet over a message naming the payment; a URL alone declines nothing", async () => {
    const before = await evmBalances(devnet, "user");
    const ask1 = await ask();
    const view = (await (await page(ask1.paymentId)).json()) as { decline?: WalletRequest };
    const decline = view.decline;
    if (decline?.kind !== "evm-typed-data") throw new Error("no decline to sign");
    expect(decline.typedData.message).toEqual({ paymentId: ask1.paymentId, wallet: evmUser });
    const typed = toViemTypedData(decline) as Parameters<PrivateKeyAccount["signTypedData"]>[0];
    const payerKey = devnet.secrets.evm.payer;
    if (!payerKey) throw new Error("no payer key");
    const code = async (body: Record<string, unknown>) =>
      (await problem(await page(ask1.paymentId, body))).code;
    expect(await code({ reject: true })).toBe("approval_invalid");
    expect(
      await code({ reject: true, signature: await privateKeyToAccount(payerKey).signTypedData(typed) }),
    ).toBe("approval_invalid");
    // The wallet's signature of another payment's decline declines nothing here.
    const other = await user.signTypedData({
      ...typed,
      message: { ...typed.message, paymentId: "pay_other" },
    });
    expect(await code({ reject: true, signature: other })).toBe("approval_invalid");
    expect((await ledgerOf(booted.running).get(ask1.paymentId))?.status).toBe("awaiting_approval");

    const signature = await user.signTypedData(typed);
    const declined = await page(ask1.paymentId, { reject: true, signature });
    expect(declined.status).toBe(200);
    expect(await declined.json()).toMatchObject({ status: "rejected" });
    const again = await page(ask1.paymentId, { reject: true, signature });
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(await code({ signature: await signTypedDataOf(ask1, user) })).toBe("approval_used");
    expect((await ledgerOf(booted.running).get(ask1.paymentId))?.status).toBe("rejected");
    expect(await evmBalances(devnet, "user")).toEqual(before);
  });

  it("Solana: the wallet-signed transaction from the page settles it", async () => {
    const price = priceOf(devnet, "weather");
    const before = await solanaBalances(devnet, "user");
    const ask1 = await ask(solUser);
    const answered = await page(ask1.paymentId, { transaction: await signSolana(ask1) });
    expect(answered.status).toBe(200);
    expect(await answered.json()).toMatchObject({ status: "settled" });
    const after = await solanaBalances(devnet, "user");
    expect(before.payer - after.payer).toBe(price);
    expect(await (await payment(ask1.paymentId)).json()).toMatchObject({ data: { untrusted: true } });
  });
});
