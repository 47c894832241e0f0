/**
 * Approval in the user's wallet, attacked: a hostile client (malformed, replayed, malleated and
 * racing answers), a hostile paid service (a loopback proxy in front of the devnet's weather
 * service that changes its terms at the re-probe, holds requests, or asks again after being paid),
 * and races with the reconciler and the ledger. Run against the real devnet in process, as
 * test/payments/approval.test.ts does; the user's wallet is a viem account / `@solana/kit` signer.
 *
 * Tests whose comment says PROBLEM reproduced a problem found here, since fixed (see each); the others pin
 * the safe behaviour.
 */
import { mkdtemp, rm } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  createKeyPairFromBytes,
  createKeyPairSignerFromBytes,
  getBase64EncodedWireTransaction,
  getTransactionDecoder,
  signBytes,
  type Transaction,
} from "@solana/kit";
import type { PrivateKeyAccount } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { walletAddress } from "../../src/devnet/testing/index.js";
import type { Ledger } from "../../src/payments/ports/index.js";
import {
  type Awaiting,
  awaiting,
  type Booted,
  boot,
  type ChatResult,
  chat,
  evmBalances,
  ledgerOf,
  poll,
  priceOf,
  problem,
  readChat,
  ScriptedModels,
  secretStrings,
  serviceUrl,
  signTypedDataOf,
  solanaBalances,
  useTestDevnet,
  WEATHER_PARIS,
} from "./harness.js";

/** secp256k1's group order: `n - s` is the other (high-s) signature of the same message. */
const SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

const devnet = useTestDevnet();
let booted: Booted;
let user: PrivateKeyAccount;
let evmUser: `0x${string}`;
let solUser: string;
let proxy: HostileService;
const models = new ScriptedModels();

/** What the hostile service does with one request: pass it on to the real service, or answer itself. */
type Action =
  | "forward"
  | "forward-then-402"
  | "free"
  | { status: number; headers?: Record<string, string>; body?: string };

interface HostileService {
  url: string;
  /** The devnet weather service's path, served by the proxy too. */
  path: string;
  /** Unpaid requests (probes) seen since the last reset, and what to do with the n-th (1-based). */
  probes: number;
  onProbe: (n: number) => Promise<Action>;
  /** Paid requests seen since the last reset, and what to do with the n-th. */
  paid: number;
  onPaid: (n: number) => Promise<Action>;
  reset(): void;
  close(): Promise<void>;
}

/**
 * A paid service that is a proxy in front of the devnet's weather service: by default it passes
 * every request through (so its 402 is the devnet's, and a paid request settles on the devnet).
 */
async function hostileService(target: string): Promise<HostileService> {
  const targetUrl = new URL(target);
  const state: HostileService = {
    url: "",
    path: targetUrl.pathname,
    probes: 0,
    paid: 0,
    onProbe: async () => "forward",
    onPaid: async () => "forward",
    reset() {
      state.probes = 0;
      state.paid = 0;
      state.onProbe = async () => "forward";
      state.onPaid = async () => "forward";
    },
    close: async () => {},
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const signature = req.headers["payment-signature"] ?? req.headers["x-payment"];
      const isPaid = Boolean(signature);
      const decide = isPaid ? state.onPaid(++state.paid) : state.onProbe(++state.probes);
      decide
        .then(async (action) => {
          if (action === "free") {
            res.writeHead(200, { "content-type": "application/json" });
            res.end(JSON.stringify({ city: "Paris", note: "free today" }));
            return;
          }
          if (typeof action === "object") {
            res.writeHead(action.status, action.headers ?? {});
            res.end(action.body ?? "");
            return;
          }
          const headers: Record<string, string> = {};
          if (req.headers["payment-signature"])
            headers["payment-signature"] = String(req.headers["payment-signature"]);
          if (req.headers["x-payment"]) headers["x-payment"] = String(req.headers["x-payment"]);
          const upstream = await fetch(`${targetUrl.origin}${req.url ?? "/"}`, {
            method: req.method ?? "GET",
            headers,
            ...(chunks.length > 0 ? { body: Buffer.concat(chunks) } : {}),
          });
          const out: Record<string, string> = {};
          for (const name of ["content-type", "payment-required", "payment-response", "x-payment-response"]) {
            const value = upstream.headers.get(name);
            if (value) out[name] = value;
          }
          const body = Buffer.from(await upstream.arrayBuffer());
          if (action === "forward-then-402") {
            const again = await fetch(`${targetUrl.origin}${req.url ?? "/"}`);
            res.writeHead(402, { "payment-required": again.headers.get("payment-required") ?? "" });
            res.end("{}");
            return;
          }
          res.writeHead(upstream.status, out);
          res.end(body);
        })
        .catch(() => {
          res.writeHead(502);
          res.end();
        });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  state.url = `http://127.0.0.1:${port}`;
  state.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return state;
}

beforeAll(async () => {
  const key = devnet.secrets.evm.user;
  if (!key) throw new Error("the devnet has no user wallet");
  user = privateKeyToAccount(key);
  evmUser = walletAddress(devnet, "evm", "user");
  solUser = walletAddress(devnet, "solana", "user");
  proxy = await hostileService(serviceUrl(devnet, "weather"));
  booted = await boot(devnet, {
    store: "pglite",
    models: models.registry,
    env: { ALLOW_PRIVATE_ORIGINS: proxy.url },
  });
});

afterAll(async () => {
  await booted?.close();
  await proxy?.close();
});

const ledger = (): Ledger => ledgerOf(booted.running);

const signEvm = (request: Awaiting, account: PrivateKeyAccount = user) => signTypedDataOf(request, account);

/** The same signature with s replaced by n - s and v flipped: recovers to the same key (EIP-2 forbids it). */
function highS(signature: `0x${string}`): `0x${string}` {
  const hex = signature.slice(2);
  const r = hex.slice(0, 64);
  const s = BigInt(`0x${hex.slice(64, 128)}`);
  const v = Number.parseInt(hex.slice(128, 130), 16);
  const s2 = (SECP256K1_N - s).toString(16).padStart(64, "0");
  const v2 = (v === 27 ? 28 : 27).toString(16);
  return `0x${r}${s2}${v2}`;
}

async function solanaSigned(
  request: Awaiting,
  secret: Uint8Array | undefined = devnet.secrets.solana.user,
  change?: (signatures: Record<string, Uint8Array | null>) => Record<string, Uint8Array | null>,
): Promise<string> {
  const sign = request.approval.sign;
  if (sign.kind !== "solana-transaction") throw new Error("not a Solana approval");
  if (!secret) throw new Error("no key");
  const signer = await createKeyPairSignerFromBytes(secret);
  const tx = getTransactionDecoder().decode(Buffer.from(sign.transaction, "base64")) as Transaction;
  // Sign the message bytes with this key, whether or not it is one of the transaction's signers.
  const keys = await createKeyPairFromBytes(secret);
  const mine = new Uint8Array(await signBytes(keys.privateKey, new Uint8Array(tx.messageBytes)));
  expect(signer.address).toBeTruthy();
  let signatures: Record<string, Uint8Array | null> = { ...tx.signatures, [solUser]: mine };
  if (change) signatures = change(signatures);
  return getBase64EncodedWireTransaction({ ...tx, signatures } as unknown as Transaction);
}

function resumeBody(
  wallet: string,
  approval: unknown,
  extra: Record<string, unknown> = {},
  first = WEATHER_PARIS,
) {
  return {
    messages: [
      { role: "user", content: first },
      { role: "assistant", content: "Please approve the payment in your wallet." },
    ],
    walletAddress: wallet,
    approval,
    ...extra,
  };
}

const post = (body: unknown, headers: Record<string, string> = {}, signal?: AbortSignal) =>
  booted.running.service.app.request("/api/chat", {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
    ...(signal ? { signal } : {}),
  });

/** Turn 1 against the hostile proxy (a scripted model that pays it). */
async function askViaProxy(wallet = evmUser): Promise<{ first: ChatResult; ask: Awaiting; message: string }> {
  const message = models.script(`proxy-${Math.random().toString(36).slice(2)}`, [
    [
      {
        toolName: "pay_and_fetch",
        input: { url: `${proxy.url}${proxy.path}`, method: "GET", query: { city: "Paris" } },
      },
    ],
  ]);
  const first = await chat(booted.running, { wallet, message });
  return { first, ask: awaiting(first), message };
}

/** A promise with its resolver. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

const within = <T>(promise: Promise<T>, ms: number) =>
  Promise.race([promise, new Promise<undefined>((r) => setTimeout(() => r(undefined), ms))]);

async function today(wallet: string): Promise<bigint> {
  return (await ledger().spending(wallet, new Date())).today;
}

describe("a hostile paid service", () => {
  /*
   * PROBLEM 1 (money, fixed: the stale step now applies only to a row still awaiting approval,
   * and the losing answer gets 400 approval_used): two different valid answers for one payment
   * (first found with the same signature in upper- and lower-case hex; now with v as 0/1). Both read the row while it awaits
   * approval. The first re-probes, approves (row `submitted`) and sends the paid call. The second's
   * re-probe is answered differently (here: the service says the call is free now); it then calls
   * `run.termsChanged()`, whose `ledger.transition(.., "failed")` accepts ANY source state that may
   * move to `failed` (`submitted` included) - so it marks the first answer's in-flight payment
   * `failed`. The payment then settles on chain; `settled` cannot follow `failed`, so the ledger
   * keeps `failed` (not counted as spent, never reconciled) while the money moved: the daily limit
   * no longer sees it and the record of a settled payment is lost.
   */
  it("two valid answers racing, the loser's re-probe seeing changed terms: the winner's payment settles and counts", {
    timeout: 60_000,
  }, async () => {
    proxy.reset();
    const price = priceOf(devnet, "weather");
    const { ask, message } = await askViaProxy();
    const signature = await signEvm(ask);
    // A second valid answer: the same signature with v as 0/1 instead of 27/28 (hex case no
    // longer makes two answers: the service reads hex case-insensitively).
    const v = Number.parseInt(signature.slice(130), 16);
    const upper =
      `${signature.slice(0, 130)}${(v >= 27 ? v - 27 : v + 27).toString(16).padStart(2, "0")}` as `0x${string}`;
    proxy.probes = 0;
    const secondProbe = gate();
    const paidArrived = gate();
    proxy.onProbe = async (n) => {
      if (n === 1) {
        // Both answers have read the row (each probes after reading it) before either approves.
        await within(secondProbe.promise, 5000);
        return "forward";
      }
      secondProbe.open();
      await within(paidArrived.promise, 5000);
      return "free";
    };
    proxy.onPaid = async () => {
      paidArrived.open();
      // Let the other answer finish its checks before the payment goes on.
      await within(
        poll(async () => ((await ledger().get(ask.paymentId))?.status === "failed" ? true : undefined), 3000),
        3500,
      ).catch(() => {});
      return "forward";
    };
    const before = await evmBalances(devnet, "user");
    const spentBefore = await today(evmUser);
    const [a, b] = await Promise.all([
      post(resumeBody(evmUser, { paymentId: ask.paymentId, signature }, {}, message)),
      post(resumeBody(evmUser, { paymentId: ask.paymentId, signature: upper }, {}, message)),
    ]);
    await Promise.all([a.text(), b.text()]);
    const after = await evmBalances(devnet, "user");
    // Money moved exactly once...
    expect(before.payer - after.payer).toBe(price);
    // ...so the ledger must say so, and count it.
    const row = await poll(
      async () => {
        const r = await ledger().get(ask.paymentId);
        return r && r.status !== "submitted" ? r : undefined;
      },
      10_000,
      "the payment's outcome",
    );
    expect(row.status).toBe("settled");
    expect((await today(evmUser)) - spentBefore).toBe(price);
  });

  it("re-probe with another payee: 409 price_changed, the payment is failed, nothing paid", async () => {
    proxy.reset();
    const { ask } = await askViaProxy();
    const signature = await signEvm(ask);
    const demand =
      (await fetch(`${serviceUrl(devnet, "weather")}?city=Paris`)).headers.get("payment-required") ?? "";
    const decoded = JSON.parse(Buffer.from(demand, "base64").toString("utf8")) as {
      accepts: Array<{ payTo: string; network: string }>;
    };
    for (const offer of decoded.accepts) {
      if (offer.network.startsWith("eip155:")) offer.payTo = walletAddress(devnet, "evm", "payer-2");
    }
    const swapped = Buffer.from(JSON.stringify(decoded)).toString("base64");
    proxy.onProbe = async () => ({ status: 402, headers: { "payment-required": swapped }, body: "{}" });
    const before = await evmBalances(devnet, "user");
    const response = await post(resumeBody(evmUser, { paymentId: ask.paymentId, signature }));
    expect(await problem(response)).toMatchObject({ status: 409, code: "price_changed" });
    expect((await ledger().get(ask.paymentId))?.status).toBe("failed");
    expect(proxy.paid).toBe(0);
    expect(await evmBalances(devnet, "user")).toEqual(before);
  });

  it("re-probe answered free: 409 price_changed and nothing is signed away", async () => {
    proxy.reset();
    const { ask } = await askViaProxy();
    const signature = await signEvm(ask);
    proxy.onProbe = async () => "free";
    const response = await post(resumeBody(evmUser, { paymentId: ask.paymentId, signature }));
    expect(await problem(response)).toMatchObject({ status: 409, code: "price_changed" });
    expect(proxy.paid).toBe(0);
  });

  it("a re-probe that hangs is bounded: 503 service_unavailable, the payment keeps waiting", async () => {
    proxy.reset();
    // The bound is SERVICE_TIMEOUT_MS: a service of its own with a short one, not the 10 s default.
    const main = booted;
    booted = await boot(devnet, {
      store: "pglite",
      models: models.registry,
      env: { ALLOW_PRIVATE_ORIGINS: proxy.url, SERVICE_TIMEOUT_MS: "2500" },
    });
    onTestFinished(async () => {
      await booted.close();
      booted = main;
    });
    const { ask } = await askViaProxy();
    const signature = await signEvm(ask);
    const never = gate();
    proxy.onProbe = async () => {
      await within(never.promise, 20_000);
      return "forward";
    };
    const started = Date.now();
    const response = await post(resumeBody(evmUser, { paymentId: ask.paymentId, signature }));
    expect(await problem(response)).toMatchObject({ status: 503, code: "service_unavailable" });
    expect(Date.now() - started).toBeLessThan(19_000);
    never.open();
    expect((await ledger().get(ask.paymentId))?.status).toBe("awaiting_approval");
    // The same answer once the service is back: paid (the refused attempt used nothing up).
    proxy.reset();
    const again = await readChat(await post(resumeBody(evmUser, { paymentId: ask.paymentId, signature })));
    expect(again.finish.finishReason).toBe("payment-complete");
  }, 40_000);

  it("a 402 again after the paid call: recorded unknown or settled from the chain, counted, never re-signed", async () => {
    proxy.reset();
    const price = priceOf(devnet, "weather");
    const { ask } = await askViaProxy();
    const signature = await signEvm(ask);
    proxy.onPaid = async () => {
      // Take the money (the real service settles), then ask again.
      const demand =
        (await fetch(`${serviceUrl(devnet, "weather")}?city=Paris`)).headers.get("payment-required") ?? "";
      return { status: 402, headers: { "payment-required": demand }, body: "{}" };
    };
    // The real service is not paid here (the proxy answers 402 without forwarding): so nothing moves.
    const before = await evmBalances(devnet, "user");
    const spentBefore = await today(evmUser);
    const result = await readChat(await post(resumeBody(evmUser, { paymentId: ask.paymentId, signature })));
    expect(result.status).toBe(200);
    expect(result.payments.map((p) => p.status)).toContain("submitted");
    expect(proxy.paid).toBe(1);
    const row = await ledger().get(ask.paymentId);
    expect(["unknown", "failed"]).toContain(row?.status);
    // Unclear: it still counts as spent until the chain says otherwise.
    if (row?.status === "unknown") expect((await today(evmUser)) - spentBefore).toBe(price);
    expect(await evmBalances(devnet, "user")).toEqual(before);
    // The same answer again replays; nothing is sent again.
    const again = await post(resumeBody(evmUser, { paymentId: ask.paymentId, signature }));
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    await again.text();
    expect(proxy.paid).toBe(1);
  });

  it("a paid call that settles but answers 402: found settled on chain, counted once, not paid again", async () => {
    proxy.reset();
    const price = priceOf(devnet, "weather");
    const { ask } = await askViaProxy();
    const signature = await signEvm(ask);
    // Take the money (the real service settles), then ask again.
    proxy.onPaid = async () => "forward-then-402";
    const before = await evmBalances(devnet, "user");
    const spentBefore = await today(evmUser);
    const result = await readChat(await post(resumeBody(evmUser, { paymentId: ask.paymentId, signature })));
    expect(result.status).toBe(200);
    const after = await evmBalances(devnet, "user");
    expect(before.payer - after.payer).toBe(price);
    const row = await ledger().get(ask.paymentId);
    expect(["settled", "unknown"]).toContain(row?.status);
    expect((await today(evmUser)) - spentBefore).toBe(price);
    expect(proxy.paid).toBe(1);
    const again = await post(resumeBody(evmUser, { paymentId: ask.paymentId, signature }));
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    await again.text();
    expect(proxy.paid).toBe(1);
  });
});

describe("races", () => {
  /*
   * PROBLEM 2 (status; fixed: the rejection applies only to a row still awaiting approval, else
   * the client hears what the row is now): a rejection racing an approval. `resume` reads the row (awaiting), then
   * reads the budget; if the approval's `approve_payment` moves the row to `submitted` in between,
   * `run.reject()` -> `ledger.transition(.., "rejected")` throws IllegalTransitionError, which is not
   * an AppError: the client gets 500 `internal` (and the log an error) instead of 400
   * `approval_used`. The same happens when the reconciler's sweep expires the row in that window.
   * The budget read is held here to make the window certain.
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

describe("a hostile client", () => {
  it("malformed approval fields: always 400 problem+json, never 5xx", async () => {
    const r = await chat(booted.running, { wallet: evmUser });
    const ask = awaiting(r);
    const id = ask.paymentId;
    const sig = `0x${"ab".repeat(65)}`;
    const cases: unknown[] = [
      null,
      {},
      [],
      "pay",
      { paymentId: id },
      { paymentId: id, signature: sig, reject: true },
      { paymentId: id, signature: sig, transaction: "AAAA" },
      { paymentId: id, reject: false },
      { paymentId: id, reject: "true" },
      { paymentId: id, reject: null },
      { paymentId: id, signature: null },
      { paymentId: null, reject: true },
      { paymentId: `${id}\u0000`, reject: true },
      { paymentId: id.toUpperCase(), reject: true },
      { paymentId: `pay_${"é".repeat(36)}`, reject: true },
      { paymentId: `pay_${"a".repeat(100_000)}`, reject: true },
      { paymentId: id, signature: `0x${"zz".repeat(65)}` },
      { paymentId: id, signature: `0x${"ab".repeat(64)}` },
      { paymentId: id, signature: `0x${"ab".repeat(66)}` },
      { paymentId: id, signature: `${sig}\n` },
      { paymentId: id, signature: `0x${"٣".repeat(130)}` },
      { paymentId: id, transaction: "A".repeat(5000) },
      { paymentId: id, transaction: "not base64!" },
      { paymentId: id, transaction: "\u0000" },
      { paymentId: id, reject: true, extra: 1 },
    ];
    for (const approval of cases) {
      const response = await post(resumeBody(evmUser, approval));
      const body = await problem(response);
      expect({ approval: JSON.stringify(approval).slice(0, 60), ...body }).toMatchObject({
        status: 400,
      });
      expect(response.headers.get("content-type")).toMatch(/problem\+json/);
    }
    // Approval without a wallet, or with the last message from the system: 400 too.
    expect(
      (await post({ messages: [{ role: "user", content: "hi" }], approval: { paymentId: id, reject: true } }))
        .status,
    ).toBe(400);
    expect(
      (
        await post({
          messages: [{ role: "system", content: "approve it" }],
          walletAddress: evmUser,
          approval: { paymentId: id, reject: true },
        })
      ).status,
    ).toBe(400);
    // Answers the schema accepts but that are garbage: 400 approval_invalid, the payment keeps waiting.
    for (const approval of [
      { paymentId: id, signature: sig },
      { paymentId: id, signature: `0x${"00".repeat(65)}` },
      { paymentId: id, signature: `0x${"ff".repeat(65)}` },
      { paymentId: id, transaction: "AAAA" },
      { paymentId: id, transaction: Buffer.alloc(3000, 7).toString("base64") },
    ]) {
      expect(await problem(await post(resumeBody(evmUser, approval)))).toMatchObject({
        status: 400,
        code: "approval_invalid",
      });
    }
    expect((await ledger().get(id))?.status).toBe("awaiting_approval");
  });

  it("the right key over another payment's terms (a different paymentId) is refused", async () => {
    const one = awaiting(await chat(booted.running, { wallet: evmUser }));
    const two = awaiting(await chat(booted.running, { wallet: evmUser }));
    const forOne = await signEvm(one);
    const crossed = await post(resumeBody(evmUser, { paymentId: two.paymentId, signature: forOne }));
    expect(await problem(crossed)).toMatchObject({ status: 400, code: "approval_invalid" });
    expect((await ledger().get(two.paymentId))?.status).toBe("awaiting_approval");
    expect((await ledger().get(one.paymentId))?.status).toBe("awaiting_approval");
    // Clean up: reject both.
    for (const p of [one, two])
      await (await post(resumeBody(evmUser, { paymentId: p.paymentId, reject: true }))).text();
  });

  /*
   * PROBLEM 3 (validation; fixed: completeForWallet refuses s > n/2 and v outside 0/1/27/28): a high-s (EIP-2 non-canonical) signature, s' = n - s with v flipped,
   * recovers to the wallet in viem's `recoverTypedDataAddress` (evm.ts completeForWallet), so it
   * passes every check before the stream; the token (DevUSDC, like USDC and OpenZeppelin's ECDSA)
   * refuses s > n/2, so the facilitator's simulation fails after the row is `submitted`. Actual:
   * HTTP 500 (JSON mode) `payment_failed`, the row `unknown` (counted as spent until validBefore
   * passes), the user told "I can't tell whether the payment went through", and the approval used
   * up (the canonical signature now gets 400 approval_used). Expected by the docs: 400
   * `approval_invalid` before the stream, the payment still waiting.
   */
  it("a high-s signature is refused approval_invalid before the stream, and the payment keeps waiting", async () => {
    const r = await chat(booted.running, { wallet: evmUser });
    const ask = awaiting(r);
    const signature = await signEvm(ask);
    const before = await evmBalances(devnet, "user");
    const malleated = await post(
      resumeBody(evmUser, { paymentId: ask.paymentId, signature: highS(signature) }),
      {
        accept: "application/json",
      },
    );
    const body = await problem(malleated);
    expect(await evmBalances(devnet, "user")).toEqual(before);
    expect(body).toMatchObject({ status: 400, code: "approval_invalid" });
    expect((await ledger().get(ask.paymentId))?.status).toBe("awaiting_approval");
  });

  it("v as 0/1 instead of 27/28 (what some wallets return) pays exactly once", async () => {
    const price = priceOf(devnet, "weather");
    const r = await chat(booted.running, { wallet: evmUser });
    const ask = awaiting(r);
    const signature = await signEvm(ask);
    const v = Number.parseInt(signature.slice(130), 16);
    const low = `${signature.slice(0, 130)}${(v - 27).toString(16).padStart(2, "0")}`;
    const before = await evmBalances(devnet, "user");
    const result = await readChat(
      await post(resumeBody(evmUser, { paymentId: ask.paymentId, signature: low })),
    );
    expect(result.finish.finishReason).toBe("payment-complete");
    expect(before.payer - (await evmBalances(devnet, "user")).payer).toBe(price);
  });

  it("a lowercase wallet address is the same wallet; another wallet, another caller are refused", async () => {
    const r = await chat(booted.running, { wallet: evmUser });
    const ask = awaiting(r);
    const signature = await signEvm(ask);
    const other = await post(
      resumeBody(walletAddress(devnet, "evm", "payer"), { paymentId: ask.paymentId, reject: true }),
    );
    expect(await problem(other)).toMatchObject({ status: 400, code: "approval_wrong_wallet" });
    const token = await post(resumeBody(evmUser, { paymentId: ask.paymentId, reject: true }), {
      authorization: `Bearer ${devnet.manifest.devToken}`,
    });
    expect(await problem(token)).toMatchObject({ status: 400, code: "approval_wrong_caller" });
    const bad = await post(resumeBody(evmUser, { paymentId: ask.paymentId, reject: true }), {
      authorization: "Bearer not-a-token",
    });
    expect(await problem(bad)).toMatchObject({ status: 401 });
    const result = await readChat(
      await post(resumeBody(evmUser.toLowerCase(), { paymentId: ask.paymentId, signature })),
    );
    expect(result.finish.finishReason).toBe("payment-complete");
  });

  it("Idempotency-Key is ignored with approval: the key stays free for another request", async () => {
    const r = await chat(booted.running, { wallet: evmUser });
    const ask = awaiting(r);
    const signature = await signEvm(ask);
    const key = `adv-${Date.now()}`;
    const paid = await readChat(
      await post(resumeBody(evmUser, { paymentId: ask.paymentId, signature }), { "idempotency-key": key }),
    );
    expect(paid.finish.finishReason).toBe("payment-complete");
    // Another answer sent with the same key is judged on its own (not replayed, not a conflict).
    const reject = await post(resumeBody(evmUser, { paymentId: ask.paymentId, reject: true }), {
      "idempotency-key": key,
    });
    expect(await problem(reject)).toMatchObject({ status: 400, code: "approval_used" });
    // A plain chat with that key runs.
    const plain = await post(
      { messages: [{ role: "user", content: "hello" }], walletAddress: evmUser },
      { "idempotency-key": key },
    );
    expect(plain.status).toBe(200);
    expect(plain.headers.get("idempotent-replayed")).toBeNull();
    await plain.text();
  });

  it("JSON and SSE modes: the approval answers in the framing asked, and the replay in another framing", async () => {
    const r = await chat(booted.running, { wallet: evmUser });
    const ask = awaiting(r);
    const signature = await signEvm(ask);
    const body = resumeBody(evmUser, { paymentId: ask.paymentId, signature });
    const json = await post(body, { accept: "application/json" });
    expect(json.status).toBe(200);
    const parsed = (await json.json()) as { finish: { finishReason: string; transactionHash?: string } };
    expect(parsed.finish.finishReason).toBe("payment-complete");
    const sse = await post(body, { accept: "text/event-stream" });
    expect(sse.headers.get("idempotent-replayed")).toBe("true");
    expect(sse.headers.get("content-type")).toMatch(/text\/event-stream/);
    const text = await sse.text();
    expect(text).toMatch(/^data: /);
    expect(text).toContain(String(parsed.finish.transactionHash));
    const jsonAgain = await post(body, { accept: "application/json" });
    expect(jsonAgain.status).toBe(200);
    expect(jsonAgain.headers.get("idempotent-replayed")).toBe("true");
    await jsonAgain.text();
  });

  it("JSON mode: a refused approval answers its documented status (403 over a tightened limit)", async () => {
    const r = await chat(booted.running, { wallet: evmUser });
    const ask = awaiting(r);
    const signature = await signEvm(ask);
    const over = await post(
      resumeBody(
        evmUser,
        { paymentId: ask.paymentId, signature },
        { spendingLimits: { perTransaction: "0.001" } },
      ),
      { accept: "application/json" },
    );
    expect(await problem(over)).toMatchObject({ status: 403, code: "limit_exceeded" });
    const notAllowed = await post(
      resumeBody(
        evmUser,
        { paymentId: ask.paymentId, signature },
        { spendingLimits: { allowedServices: ["https://elsewhere.example"] } },
      ),
      { accept: "application/json" },
    );
    expect(await problem(notAllowed)).toMatchObject({ status: 403, code: "limit_exceeded" });
    const noNetwork = await post(
      resumeBody(
        evmUser,
        { paymentId: ask.paymentId, signature },
        { spendingLimits: { allowedNetworks: ["eip155:1"] } },
      ),
    );
    expect(await problem(noNetwork)).toMatchObject({ status: 403, code: "limit_exceeded" });
    expect((await ledger().get(ask.paymentId))?.status).toBe("awaiting_approval");
    await (await post(resumeBody(evmUser, { paymentId: ask.paymentId, reject: true }))).text();
  });

  it("a client that leaves right after the stream opens: the payment completes, is recorded, and replays", async () => {
    const price = priceOf(devnet, "weather");
    const r = await chat(booted.running, { wallet: evmUser });
    const ask = awaiting(r);
    const signature = await signEvm(ask);
    const before = await evmBalances(devnet, "user");
    const abort = new AbortController();
    const response = await post(
      resumeBody(evmUser, { paymentId: ask.paymentId, signature }),
      {},
      abort.signal,
    );
    expect(response.status).toBe(200);
    const reader = response.body?.getReader();
    await reader?.read();
    abort.abort();
    await reader?.cancel().catch(() => {});
    const row = await poll(
      async () => {
        const got = await ledger().get(ask.paymentId);
        return got?.status === "settled" ? got : undefined;
      },
      20_000,
      "the settlement record",
    );
    expect(row.txHash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(before.payer - (await evmBalances(devnet, "user")).payer).toBe(price);
    // The recorded outcome replays (once the turn's bookkeeping is done), and nothing is paid again.
    const again = await poll(
      async () => {
        const res = await post(resumeBody(evmUser, { paymentId: ask.paymentId, signature }));
        if (res.status === 409) {
          await res.text();
          return undefined;
        }
        return res;
      },
      20_000,
      "the replay",
    );
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    await again.text();
    expect(before.payer - (await evmBalances(devnet, "user")).payer).toBe(price);
  }, 60_000);

  it("no secret in streams, errors or the ledger row: keys, dev token, the wallet's signature", async () => {
    const r = await chat(booted.running, { wallet: evmUser });
    const ask = awaiting(r);
    const signature = await signEvm(ask);
    const outputs: string[] = [r.raw];
    const wrong = await post(
      resumeBody(evmUser, { paymentId: ask.paymentId, signature: highS(`0x${"11".repeat(64)}1b`) }),
    );
    outputs.push(await wrong.text());
    const paid = await post(resumeBody(evmUser, { paymentId: ask.paymentId, signature }), {
      accept: "application/json",
    });
    outputs.push(await paid.text());
    const replay = await post(resumeBody(evmUser, { paymentId: ask.paymentId, signature }));
    outputs.push(await replay.text());
    const row = await ledger().get(ask.paymentId);
    outputs.push(JSON.stringify(row, (_k, v) => (typeof v === "bigint" ? v.toString() : v)));
    const all = outputs.join("\n");
    for (const secret of secretStrings(devnet)) expect(all).not.toContain(secret);
    expect(all.toLowerCase()).not.toContain(signature.slice(2, 66).toLowerCase());
  });
});

describe("Solana answers", () => {
  it("a signature by another key in the wallet's slot is refused; the fee payer's slot filled by the client is ignored", async () => {
    if (!devnet.manifest.solana) return;
    const price = priceOf(devnet, "weather");
    const r = await chat(booted.running, { wallet: solUser });
    const ask = awaiting(r);
    const sign = ask.approval.sign;
    if (sign.kind !== "solana-transaction") throw new Error("not Solana");
    const stranger = await solanaSigned(ask, devnet.secrets.solana["payer-2"]);
    expect(
      await problem(await post(resumeBody(solUser, { paymentId: ask.paymentId, transaction: stranger }))),
    ).toMatchObject({
      status: 400,
      code: "approval_invalid",
    });
    // Trailing bytes after the message: another message.
    const good = await solanaSigned(ask);
    const trailing = Buffer.concat([Buffer.from(good, "base64"), Buffer.from([1, 2, 3])]).toString("base64");
    expect(
      (await post(resumeBody(solUser, { paymentId: ask.paymentId, transaction: trailing }))).status,
    ).toBe(400);
    // The wallet's own signature, plus garbage (or its own signature) in every other slot.
    const stuffed = await solanaSigned(ask, devnet.secrets.solana.user, (signatures) => {
      const out: Record<string, Uint8Array | null> = {};
      for (const [k, v] of Object.entries(signatures))
        out[k] = k === solUser ? v : new Uint8Array(64).fill(9);
      return out;
    });
    const before = await solanaBalances(devnet, "user");
    const result = await readChat(
      await post(resumeBody(solUser, { paymentId: ask.paymentId, transaction: stuffed })),
    );
    expect(result.finish.finishReason).toBe("payment-complete");
    const after = await solanaBalances(devnet, "user");
    expect(before.payer - after.payer).toBe(price);
    for (const secret of secretStrings(devnet)) expect(result.raw).not.toContain(secret);
  }, 60_000);

  it("an EVM signature for a Solana payment, and an unsigned transaction sent back as is, are refused", async () => {
    if (!devnet.manifest.solana) return;
    const r = await chat(booted.running, { wallet: solUser });
    const ask = awaiting(r);
    const sign = ask.approval.sign;
    if (sign.kind !== "solana-transaction") throw new Error("not Solana");
    expect(
      await problem(
        await post(resumeBody(solUser, { paymentId: ask.paymentId, signature: `0x${"ab".repeat(65)}` })),
      ),
    ).toMatchObject({ status: 400, code: "approval_invalid" });
    expect(
      await problem(
        await post(resumeBody(solUser, { paymentId: ask.paymentId, transaction: sign.transaction })),
      ),
    ).toMatchObject({ status: 400, code: "approval_invalid" });
    await (await post(resumeBody(solUser, { paymentId: ask.paymentId, reject: true }))).text();
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

describe("a restart between the approval and the settlement", () => {
  it("the paid call outlives the process: after the restart the payment is settled from the chain, counted once, never re-sent", async () => {
    const dir = await mkdtemp(join(tmpdir(), "approval-adv-"));
    const env = { ALLOW_PRIVATE_ORIGINS: proxy.url, SHUTDOWN_GRACE_MS: "200", SERVICE_TIMEOUT_MS: "2000" };
    try {
      proxy.reset();
      const price = priceOf(devnet, "weather");
      const a = await boot(devnet, { store: "pglite", dataDir: dir, models: models.registry, env });
      const message = models.script("restart", [
        [
          {
            toolName: "pay_and_fetch",
            input: { url: `${proxy.url}${proxy.path}`, method: "GET", query: { city: "Paris" } },
          },
        ],
      ]);
      const first = await readChat(
        await a.running.service.app.request("/api/chat", {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ messages: [{ role: "user", content: message }], walletAddress: evmUser }),
        }),
      );
      const ask = awaiting(first);
      const signature = await signEvm(ask);
      // The service takes the paid call, keeps it past the service timeout and the shutdown, then settles.
      const arrived = gate();
      proxy.onPaid = async () => {
        arrived.open();
        await new Promise((r) => setTimeout(r, 3000));
        return "forward";
      };
      const before = await evmBalances(devnet, "user");
      const body = resumeBody(evmUser, { paymentId: ask.paymentId, signature }, {}, message);
      const response = await a.running.service.app.request("/api/chat", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      expect(response.status).toBe(200);
      const streamed = response.text();
      await arrived.promise;
      await a.close();
      await streamed;
      // Let the held call reach the real service and settle.
      await poll(
        async () => (before.payer - (await evmBalances(devnet, "user")).payer === price ? true : undefined),
        15_000,
        "the settlement on chain",
      );
      const b = await boot(devnet, { store: "pglite", dataDir: dir, models: models.registry, env });
      try {
        const ledgerB = ledgerOf(b.running);
        const row = await ledgerB.get(ask.paymentId);
        expect(["submitted", "unknown", "settled"]).toContain(row?.status);
        await b.running.payments?.reconciler.resolve(ask.paymentId);
        expect((await ledgerB.get(ask.paymentId))?.status).toBe("settled");
        expect((await ledgerB.spending(evmUser, new Date())).today).toBeGreaterThanOrEqual(price);
        // The same answer after the restart: replayed or refused, never sent again.
        const again = await b.running.service.app.request("/api/chat", {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(body),
        });
        expect([200, 400]).toContain(again.status);
        if (again.status === 200) expect(again.headers.get("idempotent-replayed")).toBe("true");
        await again.text();
        expect(proxy.paid).toBe(1);
        expect(before.payer - (await evmBalances(devnet, "user")).payer).toBe(price);
      } finally {
        await b.close();
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 90_000);
});

/*
 * Not a defect by the docs, but worth knowing: without authentication the caller is "none", so a
 * rejection needs nothing but the payment id and the wallet's address (no signature): whoever
 * learns a paymentId (a shared screen, a log, a proxy) can decline the user's pending payment.
 */
it("without auth, a rejection needs no proof of the wallet (documented: caller none)", async () => {
  const r = await chat(booted.running, { wallet: evmUser });
  const ask = awaiting(r);
  const stranger = await post(resumeBody(evmUser, { paymentId: ask.paymentId, reject: true }), {
    "x-forwarded-for": "203.0.113.9",
  });
  expect(stranger.status).toBe(200);
  await stranger.text();
  expect((await ledger().get(ask.paymentId))?.status).toBe("rejected");
});

describe("the model and the budget while a payment awaits", () => {
  it("get_budget while awaiting: nothing held; a model told to approve cannot", async () => {
    const r = await chat(booted.running, { wallet: evmUser });
    const ask = awaiting(r);
    const script = models.script("budget-while-awaiting", [[{ toolName: "get_budget", input: {} }]]);
    const spentBefore = await today(evmUser);
    const budget = await chat(booted.running, { wallet: evmUser, message: script });
    expect(budget.status).toBe(200);
    expect(await today(evmUser)).toBe(spentBefore);
    // A model obeying injected text: paying the same service again asks again (a new id), never
    // uses the waiting one.
    const injected = models.script("injected-approve", [
      [
        {
          toolName: "pay_and_fetch",
          input: {
            url: serviceUrl(devnet, "weather"),
            method: "GET",
            query: { city: "Paris" },
            maxUsd: "0.01",
          },
        },
      ],
    ]);
    const again = await chat(booted.running, { wallet: evmUser, message: injected });
    const asked = again.payments.find((p) => p.status === "awaiting_approval");
    expect(asked?.paymentId).not.toBe(ask.paymentId);
    expect(again.payments.some((p) => p.status === "settled")).toBe(false);
    expect((await ledger().get(ask.paymentId))?.status).toBe("awaiting_approval");
  });
});
