/**
 * docs/protocol.md#signing-in-with-a-wallet: a wallet signs a Sign-In-With-X message the service
 * issued and gets a session token that reads the payments made from that wallet (whoever asked for
 * them) through GET /api/payments and /api/payments/:id, and nothing else. Each refusal of
 * POST /api/auth/wallet has its code: another service's message, a replayed nonce, an expired
 * message, a signature that is not the wallet's, a message for another wallet than its nonce's.
 * The real store (PGlite in memory, or PostgreSQL with DATABASE_URL), the real routes, the client SDK.
 */
import { generateKeyPairSigner, type KeyPairSigner } from "@solana/kit";
import { Hono } from "hono";
import { generatePrivateKey, type PrivateKeyAccount, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ChatClient,
  evmSignInWallet,
  type SignInChallenge,
  signInMessage,
  solanaSignInWallet,
} from "../../src/client/index.js";
import { AppError } from "../../src/errors/index.js";
import { auth } from "../../src/http/auth.js";
import { mountPaymentRoutes } from "../../src/http/payments.js";
import { problemResponse } from "../../src/http/problem.js";
import { mountWalletAuthRoutes } from "../../src/http/wallet-auth.js";
import { silentLogger } from "../../src/log/index.js";
import { createPayments, SUGGESTED_LIMITS } from "../../src/payments/index.js";
import { ProtocolError } from "../../src/protocol/index.js";
import { WalletSignIn } from "../../src/signin/index.js";
import { openStore, type Store } from "../../src/store/index.js";
import { at, HOUR, payment, T0 } from "../../src/store/testing/fixtures.js";
import { dropSchema, uniqueSchema } from "./harness.js";

const SERVICE = "http://service.test";
/** A page of another origin allowed to call the service (CORS_ORIGINS). */
const APP = "https://app.example";
const CAROL = "carol-token-0123456789abcdef";
const EVM = "eip155:31337";
const SOLANA = "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1";

let store: Store;
let app: Hono;
let now = T0;
let alice: PrivateKeyAccount;
let bob: PrivateKeyAccount;
let sol: KeyPairSigner;
/** Payments made from each wallet, oldest first. */
const paid = { alice: [] as string[], bob: [] as string[], sol: [] as string[] };
const schema = process.env.DATABASE_URL ? uniqueSchema("siwx") : undefined;

const fetchApp = (async (url: string | URL | Request, init?: RequestInit) =>
  app.request(String(url), init)) as typeof fetch;
const client = (token?: string, baseUrl = SERVICE) =>
  new ChatClient({ baseUrl, ...(token ? { token } : {}), fetch: fetchApp });

async function reserve(wallet: string, caller: string | null, hour: number, network = EVM): Promise<string> {
  const input = payment({ wallet, caller, now: at(hour * HOUR), network });
  const result = await store.ledger.reserve(input);
  if (!result.ok) throw new Error("refused");
  return input.paymentId;
}

beforeAll(async () => {
  store = await openStore(
    process.env.DATABASE_URL && schema
      ? { databaseUrl: process.env.DATABASE_URL, schema }
      : { dataDir: "memory://" },
  );
  alice = privateKeyToAccount(generatePrivateKey());
  bob = privateKeyToAccount(generatePrivateKey());
  sol = await generateKeyPairSigner();
  // Alice's wallet paid for Carol's token, for nobody's (no token) and for a second caller; Bob's
  // wallet for Carol; the Solana wallet once.
  paid.alice.push(await reserve(alice.address, "carol", 0));
  paid.bob.push(await reserve(bob.address, "carol", 1));
  paid.alice.push(await reserve(alice.address, null, 2));
  paid.alice.push(await reserve(alice.address, "dave", 3));
  paid.sol.push(await reserve(sol.address, null, 4, SOLANA));
  const { face } = createPayments({
    ledger: store.ledger,
    history: store.history,
    delivered: store.delivered,
    discoveryUrls: [],
    rpcUrls: {},
    assets: {},
    allowPrivateOrigins: [],
    signerKeys: [],
    preferredNetworks: [],
    limits: { ...SUGGESTED_LIMITS, allowedNetworks: [], allowedServices: "any" },
    maxTimeoutSeconds: 600,
    minTimeLeftMs: 0,
    serviceTimeoutMs: 15_000,
    reconcileIntervalMs: 3_600_000,
  });
  const signIn = new WalletSignIn({
    publicUrl: SERVICE,
    origins: [APP],
    store: store.signIn,
    now: () => now,
  });
  const known = { authTokens: new Map([[CAROL, "carol"]]), requireAuth: false };
  app = new Hono();
  app.onError((error) => {
    if (error instanceof AppError) return problemResponse(error);
    throw error;
  });
  const rateLimiter = { consume: async () => ({ ok: true as const }), close: async () => {} };
  mountWalletAuthRoutes(app, { signIn, rateLimiter, clientIp: () => "127.0.0.1" });
  mountPaymentRoutes(app, {
    face,
    auth: auth(known, "history"),
    walletSessions: (token) => signIn.session(token),
    logger: silentLogger,
  });
  // A route of another scope, guarded as the chat is.
  app.post("/api/chat", auth(known, "chat"), (c) => c.text("chat"));
});

afterAll(async () => {
  await store?.close();
  await dropSchema(schema);
});

const post = (path: string, body: unknown) =>
  app.request(path, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });

async function challengeFor(address: string, chainId = EVM): Promise<SignInChallenge> {
  const response = await post("/api/auth/wallet/nonce", { address, chainId });
  expect(response.status).toBe(200);
  return (await response.json()) as SignInChallenge;
}

/** The challenge's fields, changed as given, signed by `signer` over their own text. */
async function signed(challenge: SignInChallenge, signer: PrivateKeyAccount, change: object = {}) {
  const { message: _issued, ...fields } = { ...challenge, ...change };
  return { ...fields, signature: await signer.signMessage({ message: signInMessage(fields) }) };
}

async function refusal(body: unknown): Promise<{ status: number; code: string }> {
  const response = await post("/api/auth/wallet", body);
  const problem = (await response.json()) as { code: string };
  return { status: response.status, code: problem.code };
}

describe("signing in with a wallet", () => {
  it("issues a CAIP-122 message for this service, and its session reads the wallet's payments by any caller", async () => {
    const challenge = await challengeFor(alice.address.toLowerCase());
    expect(challenge).toMatchObject({
      domain: "service.test",
      uri: SERVICE,
      address: alice.address,
      chainId: EVM,
    });
    expect(challenge.message).toContain(
      `service.test wants you to sign in with your Ethereum account:\n${alice.address}\n`,
    );
    expect(challenge.message).toContain("\nChain ID: 31337\n");
    const session = await client().signIn(evmSignInWallet(alice, EVM));
    expect(session).toMatchObject({ wallet: alice.address, chainId: EVM, scope: "history" });
    expect(session.token).toMatch(/^x4w_/);
    const page = await client(session.token).listPayments();
    expect(page.items.map((p) => p.paymentId)).toEqual([...paid.alice].reverse());
    // One of them, by id; another wallet's is the same 404 as an unknown id.
    expect((await client(session.token).getPayment(paid.alice[0] ?? "")).paymentId).toBe(paid.alice[0]);
    await expect(client(session.token).getPayment(paid.bob[0] ?? "")).rejects.toMatchObject({
      status: 404,
      code: "not_found",
    });
    // Carol's token still reads Carol's own, of both wallets.
    const carols = await client(CAROL).listPayments();
    expect(carols.items.map((p) => p.paymentId)).toEqual([paid.bob[0], paid.alice[0]]);
  });

  it("never lists another wallet's payments", async () => {
    const session = await client().signIn(evmSignInWallet(bob, EVM));
    const page = await client(session.token).listPayments({ limit: 100 });
    expect(page.items.map((p) => p.paymentId)).toEqual(paid.bob);
  });

  it("signs out: the session's token then reads nothing, and signing out again changes nothing", async () => {
    const session = await client().signIn(evmSignInWallet(alice, EVM));
    expect((await client(session.token).listPayments()).items.length).toBeGreaterThan(0);
    await client().signOut(session.token);
    await expect(client(session.token).listPayments()).rejects.toMatchObject({ status: 401 });
    await client().signOut(session.token);
    // Another session of the same wallet is its own: still open.
    const other = await client().signIn(evmSignInWallet(alice, EVM));
    await client().signOut(session.token);
    expect((await client(other.token).listPayments()).items.length).toBeGreaterThan(0);
  });

  it("signs a Solana wallet in with ed25519", async () => {
    const session = await client().signIn(solanaSignInWallet(sol, SOLANA));
    expect(session.wallet).toBe(sol.address);
    expect((await client(session.token).listPayments()).items.map((p) => p.paymentId)).toEqual(paid.sol);
  });

  it("refuses a message for another service", async () => {
    const challenge = await challengeFor(alice.address);
    const other = await signed(challenge, alice, { domain: "evil.example", uri: "https://evil.example" });
    expect(await refusal(other)).toEqual({ status: 401, code: "signin_wrong_domain" });
  });

  it("names the asking page's site when it is one of the service's, and holds a nonce to it", async () => {
    const asked = (origin: string) =>
      app.request("/api/auth/wallet/nonce", {
        method: "POST",
        headers: { "Content-Type": "application/json", Origin: origin },
        body: JSON.stringify({ address: alice.address, chainId: EVM }),
      });
    const fromApp = (await (await asked(APP)).json()) as SignInChallenge;
    expect(fromApp).toMatchObject({ domain: "app.example", uri: APP });
    expect((await post("/api/auth/wallet", await signed(fromApp, alice))).status).toBe(200);
    // Another site gets the service's own name, never its.
    expect(await (await asked("https://evil.example")).json()).toMatchObject({ domain: "service.test" });
    // A nonce issued for one site is no good in a message naming another of the service's sites.
    const again = (await (await asked(APP)).json()) as SignInChallenge;
    const moved = await signed(again, alice, { domain: "service.test", uri: SERVICE });
    expect(await refusal(moved)).toEqual({ status: 401, code: "signin_wrong_domain" });
  });

  it("refuses a nonce used once already", async () => {
    const body = await signed(await challengeFor(alice.address), alice);
    expect((await post("/api/auth/wallet", body)).status).toBe(200);
    expect(await refusal(body)).toEqual({ status: 401, code: "signin_nonce_used" });
  });

  it("refuses a message signed after it expired", async () => {
    const challenge = await challengeFor(alice.address);
    now = new Date(T0.getTime() + 5 * 60_000 + 1000);
    try {
      expect(await refusal(await signed(challenge, alice))).toEqual({ status: 401, code: "signin_expired" });
    } finally {
      now = T0;
    }
  });

  // Found by a black-box run: the issued message was signed, and a body claiming a day's more
  // life was taken as it stood.
  it("refuses a body whose fields are not the message issued, though the signature is over it", async () => {
    for (const change of [
      (c: SignInChallenge) => ({
        expirationTime: new Date(Date.parse(c.expirationTime) + 86_400_000).toISOString(),
      }),
      () => ({ statement: "Sign in." }),
    ]) {
      const challenge = await challengeFor(alice.address);
      const { message, ...fields } = challenge;
      const body = { ...fields, ...change(challenge), signature: await alice.signMessage({ message }) };
      expect(await refusal(body)).toEqual({ status: 400, code: "invalid_request" });
    }
  });

  it("refuses a signature that is not the wallet's", async () => {
    const challenge = await challengeFor(alice.address);
    const { message, ...fields } = challenge;
    const forged = { ...fields, signature: await bob.signMessage({ message }) };
    expect(await refusal(forged)).toEqual({ status: 401, code: "signin_bad_signature" });
  });

  it("refuses a message for another wallet than its nonce's", async () => {
    // Alice's nonce, signed in Bob's name by Bob: a valid signature, of the wrong message.
    const challenge = await challengeFor(alice.address);
    expect(await refusal(await signed(challenge, bob, { address: bob.address }))).toEqual({
      status: 401,
      code: "signin_wrong_address",
    });
  });

  it("refuses malformed bodies with invalid_request, naming the field", async () => {
    const response = await post("/api/auth/wallet/nonce", { address: alice.address, chainId: "solana:x" });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ code: "invalid_request", errors: [{ path: "chainId" }] });
  });

  it("a session reads the history only, and ends after 12 hours", async () => {
    const session = await client().signIn(evmSignInWallet(alice, EVM));
    const chat = await app.request("/api/chat", {
      method: "POST",
      headers: { Authorization: `Bearer ${session.token}` },
    });
    expect(chat.status).toBe(403);
    expect(((await chat.json()) as { code: string }).code).toBe("forbidden");
    now = new Date(T0.getTime() + 12 * HOUR);
    try {
      await expect(client(session.token).listPayments()).rejects.toMatchObject({
        status: 401,
        code: "unauthorized",
      });
    } finally {
      now = T0;
    }
  });

  it("the SDK signs nothing that is not this service's message for this wallet", async () => {
    let asked = 0;
    const wallet = { ...evmSignInWallet(alice, EVM), signMessage: async () => `0x${String(++asked)}` };
    await expect(client(undefined, "http://other.test").signIn(wallet)).rejects.toBeInstanceOf(ProtocolError);
    expect(asked).toBe(0);
    // This service's message is signed; a signature that is not the wallet's is then refused.
    await expect(client().signIn(wallet)).rejects.toMatchObject({ code: "signin_bad_signature" });
    expect(asked).toBe(1);
  });
});
