/**
 * What the approval-attack files share (test/payments/approval-*.test.ts: a hostile client, a
 * hostile paid service, races, a restart): the user's wallet (a viem account / `@solana/kit`
 * signer), a hostile paid service (a loopback proxy in front of the devnet's weather service that
 * changes its terms at the re-probe, holds requests, or asks again after being paid), and helpers
 * that build and post approval answers. Each file calls {@link useApprovalAttack} once, at its top.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
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
import { afterAll, beforeAll, expect } from "vitest";
import { walletAddress } from "../../src/devnet/testing/index.js";
import type { Ledger, LedgerReads } from "../../src/payments/index.js";
import {
  type Awaiting,
  awaiting,
  type Booted,
  boot,
  type ChatResult,
  chat,
  ledgerOf,
  rowsOf,
  ScriptedModels,
  serviceUrl,
  signTypedDataOf,
  type TestDevnet,
  useTestDevnet,
  WEATHER_PARIS,
} from "./harness.js";

/** secp256k1's group order: `n - s` is the other (high-s) signature of the same message. */
export const SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

// Set by useApprovalAttack() (the devnet at once, the rest in its beforeAll); read by the tests.
// The integration project shares this module between the files of a worker (isolate: false), so
// each file sets all of them again.
export let devnet: TestDevnet;
export let booted: Booted;
export let user: PrivateKeyAccount;
export let evmUser: `0x${string}`;
export let solUser: string;
export let proxy: HostileService;
export const models = new ScriptedModels();

/** Puts `next` where the tests read `booted` (a test that needs a service of other settings); returns the one it replaced. */
export function setBooted(next: Booted): Booted {
  const previous = booted;
  booted = next;
  return previous;
}

/** What the hostile service does with one request: pass it on to the real service, or answer itself. */
export type Action =
  | "forward"
  | "forward-then-402"
  /** Pass it on (the real service settles), then name another transaction in the settlement response. */
  | { forwardForging: string }
  /** Pass it on (the real service settles), then answer this body as JSON instead of the service's. */
  | { forwardThenBody: string }
  | "free"
  | { status: number; headers?: Record<string, string>; body?: string };

export interface HostileService {
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
export async function hostileService(target: string): Promise<HostileService> {
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
          if (typeof action === "object" && "status" in action) {
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
          if (typeof action === "object" && "forwardThenBody" in action) {
            res.writeHead(upstream.status, { ...out, "content-type": "application/json" });
            res.end(action.forwardThenBody);
            return;
          }
          if (typeof action === "object" && out["payment-response"]) {
            const said = JSON.parse(Buffer.from(out["payment-response"], "base64").toString("utf8"));
            const forged = { ...said, transaction: action.forwardForging };
            out["payment-response"] = Buffer.from(JSON.stringify(forged)).toString("base64");
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

/**
 * The set-up of every approval-attack file: this worker's devnet (the file's own wallets), the
 * user's keys, the hostile proxy in front of the weather service and (unless `boot: false`, for a
 * file that boots its own) a service on PGlite that may reach the proxy.
 */
export function useApprovalAttack(options: { boot?: boolean } = {}): void {
  devnet = useTestDevnet();
  beforeAll(async () => {
    const key = devnet.secrets.evm.user;
    if (!key) throw new Error("the devnet has no user wallet");
    user = privateKeyToAccount(key);
    evmUser = walletAddress(devnet, "evm", "user");
    solUser = walletAddress(devnet, "solana", "user");
    proxy = await hostileService(serviceUrl(devnet, "weather"));
    if (options.boot === false) {
      // Not this file's: an earlier file's service, closed at its end.
      booted = undefined as unknown as Booted;
      return;
    }
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
}

export const ledger = (): Ledger & LedgerReads => ledgerOf(booted.running);

export const signEvm = (request: Awaiting, account: PrivateKeyAccount = user) =>
  signTypedDataOf(request, account);

/** The same signature with s replaced by n - s and v flipped: recovers to the same key (EIP-2 forbids it). */
export function highS(signature: `0x${string}`): `0x${string}` {
  const hex = signature.slice(2);
  const r = hex.slice(0, 64);
  const s = BigInt(`0x${hex.slice(64, 128)}`);
  const v = Number.parseInt(hex.slice(128, 130), 16);
  const s2 = (SECP256K1_N - s).toString(16).padStart(64, "0");
  const v2 = (v === 27 ? 28 : 27).toString(16);
  return `0x${r}${s2}${v2}`;
}

export async function solanaSigned(
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

export function resumeBody(
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

export const post = (body: unknown, headers: Record<string, string> = {}, signal?: AbortSignal) =>
  booted.running.service.app.request("/api/chat", {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
    ...(signal ? { signal } : {}),
  });

/** Turn 1 against the hostile proxy (a scripted model that pays it). */
export async function askViaProxy(
  wallet = evmUser,
): Promise<{ first: ChatResult; ask: Awaiting; message: string }> {
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

/**
 * A paid call through the hostile proxy (the scripted model pays it), paid by the devnet's `payer`
 * wallet on that chain with the dev token (the server signs): the turn and the rows it made.
 */
export async function payThroughProxy(chain: "evm" | "solana" = "evm") {
  const message = models.script(`via-proxy-${Math.random().toString(36).slice(2)}`, [
    [
      {
        toolName: "pay_and_fetch",
        input: { url: `${proxy.url}${proxy.path}`, method: "GET", query: { city: "Paris" } },
      },
    ],
  ]);
  const wallet =
    chain === "evm" ? walletAddress(devnet, "evm", "payer") : walletAddress(devnet, "solana", "payer");
  const result = await chat(booted.running, { wallet, token: devnet.manifest.devToken, message });
  return { result, rows: await rowsOf(booted.running, result) };
}

/** A promise with its resolver. */
export function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

export const within = <T>(promise: Promise<T>, ms: number) =>
  Promise.race([promise, new Promise<undefined>((r) => setTimeout(() => r(undefined), ms))]);

export async function today(wallet: string): Promise<bigint> {
  return (await ledger().spending(wallet, new Date())).today;
}
