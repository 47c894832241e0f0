/**
 * docs/clients.md#terminal-chat: `chat payments` without a bearer token signs in with the wallet of
 * `--key-file` (or the devnet's `user` wallet, whose key the devnet's service hands out) and lists
 * the payments made from that wallet, whoever asked for them, and never another wallet's. The real
 * routes on a loopback port, the terminal chat's main() with in-memory streams.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ServerType } from "@hono/node-server";
import { Hono } from "hono";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "../../src/cli/main.js";
import { AppError } from "../../src/errors/index.js";
import { auth } from "../../src/http/auth.js";
import { mountPaymentRoutes } from "../../src/http/payments.js";
import { problemResponse } from "../../src/http/problem.js";
import { mountWalletAuthRoutes } from "../../src/http/wallet-auth.js";
import { silentLogger } from "../../src/log/index.js";
import { createPayments, SUGGESTED_LIMITS } from "../../src/payments/index.js";
import { closeServer, listen } from "../../src/service.js";
import { WalletSignIn } from "../../src/signin/index.js";
import { openStore, type Store } from "../../src/store/index.js";
import { at, HOUR, payment } from "../../src/store/testing/fixtures.js";
import { memoryIo } from "../client/support.js";
import { scratchDir } from "../helpers.js";

const mineKey = generatePrivateKey();
const mine = privateKeyToAccount(mineKey);
const userKey = generatePrivateKey();
const user = privateKeyToAccount(userKey);
const other = privateKeyToAccount(generatePrivateKey());
const paid = { mine: [] as string[], user: [] as string[], other: [] as string[] };

let store: Store;
let server: ServerType;
let url: string;

beforeAll(async () => {
  store = await openStore({ dataDir: "memory://" });
  const reserve = async (wallet: string, caller: string | null, hour: number) => {
    const input = payment({ wallet, caller, now: at(hour * HOUR) });
    if (!(await store.ledger.reserve(input)).ok) throw new Error("refused");
    return input.paymentId;
  };
  paid.mine.push(await reserve(mine.address, "someone", 0));
  paid.other.push(await reserve(other.address, null, 1));
  paid.mine.push(await reserve(mine.address, null, 2));
  paid.user.push(await reserve(user.address, null, 3));
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
  const app = new Hono();
  // The message names the service's own origin, known once it listens: routes are added then.
  ({ server, url } = await listen(app, { host: "127.0.0.1", port: 0 }));
  app.onError((error) => {
    if (error instanceof AppError) return problemResponse(error);
    throw error;
  });
  const signIn = new WalletSignIn({ publicUrl: url, store: store.signIn });
  const rateLimiter = { consume: async () => ({ ok: true as const }), close: async () => {} };
  mountWalletAuthRoutes(app, { signIn, rateLimiter, clientIp: () => "127.0.0.1" });
  mountPaymentRoutes(app, {
    face,
    auth: auth({ authTokens: new Map(), requireAuth: false }, "history"),
    walletSessions: (token) => signIn.session(token),
    logger: silentLogger,
  });
  // As the embedded devnet's service does (src/http/devnet-wallet.ts).
  app.get("/api/devnet/wallets", (c) =>
    c.json({ evm: { network: "eip155:31337", address: user.address, privateKey: userKey }, solana: null }),
  );
});

afterAll(async () => {
  if (server) await closeServer(server);
  await store?.close();
});

async function run(args: string[], env: Record<string, string> = {}) {
  const io = memoryIo(env);
  const code = await main(["chat", "payments", ...args], io.io);
  return { code, out: io.out(), err: io.err() };
}

describe("chat payments, signed in with a wallet", () => {
  it("--key-file: the payments made from the key's wallet, newest first, by any caller", async () => {
    const keyFile = join(scratchDir("siwx-cli"), "wallet.key");
    writeFileSync(keyFile, `${mineKey}\n`, { mode: 0o600 });
    const table = await run(["--key-file", keyFile, "--url", url]);
    expect(table.code).toBe(0);
    expect(table.err).toContain(`Signed in as ${mine.address}`);
    expect(table.out.trimEnd().split("\n")).toHaveLength(1 + paid.mine.length);
    const json = await run(["--key-file", keyFile, "--url", url, "--json"]);
    const ids = json.out
      .trimEnd()
      .split("\n")
      .map((line) => (JSON.parse(line) as { paymentId: string }).paymentId);
    expect(ids).toEqual([...paid.mine].reverse());
  });

  it("--devnet user: signs in with the devnet's user wallet", async () => {
    const dir = scratchDir("siwx-devnet");
    const manifest = join(dir, "manifest.json");
    writeFileSync(
      manifest,
      JSON.stringify({
        devToken: "dev",
        chatUrl: url,
        evm: { wallets: [{ address: user.address, role: "user" }] },
      }),
    );
    const listed = await run(["--devnet", "user", "--json"], { DEVNET_MANIFEST: manifest });
    expect(listed.code).toBe(0);
    const ids = listed.out
      .trimEnd()
      .split("\n")
      .map((line) => (JSON.parse(line) as { paymentId: string }).paymentId);
    expect(ids).toEqual(paid.user);
  });

  it("without a token or a key, lists nothing and says how to", async () => {
    const listed = await run(["--url", url]);
    expect(listed.code).toBe(0);
    expect(listed.out).toBe("");
    expect(listed.err).toContain("--key-file");
  });
});
