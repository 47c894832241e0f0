/**
 * docs/payments.md#reconciliation: a client disconnect after the first `p:` line
 * still leaves the settlement recorded and starts no new payment; a settlement that hangs after the
 * chain moved is resolved from the chain; a restart with `unknown` payments reconciles them
 * (authorization used on chain -> settled with its transaction; unused and expired -> failed).
 */
import { randomBytes, randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { walletAddress } from "../../src/devnet/testing/index.js";
import { type Ledger, type PaymentRecord, SUGGESTED_LIMITS } from "../../src/payments/index.js";
import { closeServer, listen } from "../../src/service.js";
import {
  type Booted,
  boot,
  chat,
  chatBody,
  chatHeaders,
  chatRequest,
  dropSchema,
  evmBalances,
  ledgerOf,
  payCall,
  poll,
  priceOf,
  ScriptedModels,
  STORES,
  type StoreKind,
  uniqueSchema,
  useTestDevnet,
} from "./harness.js";

const devnet = useTestDevnet();
const models = new ScriptedModels();
const dirs: string[] = [];

afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

const payer = () => walletAddress(devnet, "evm", "payer");

/** Where a restartable store lives: a PGlite data dir on disk, or a PostgreSQL schema. */
async function durableStore(store: StoreKind): Promise<{ dataDir?: string; schema?: string }> {
  if (store === "postgres") return { schema: uniqueSchema("recon") };
  const dir = await mkdtemp(join(tmpdir(), "pay-recon-"));
  dirs.push(dir);
  return { dataDir: dir };
}

describe.each(STORES)("recovery (%s)", (store: StoreKind) => {
  let booted: Booted;
  beforeAll(async () => {
    // A short service timeout, so a settlement that never answers is given up on quickly.
    booted = await boot(devnet, { store, models: models.registry, env: { SERVICE_TIMEOUT_MS: "1500" } });
  });
  afterAll(async () => {
    await booted?.close();
    await dropSchema(booted?.schema);
  });

  it("records the settlement after the client disconnects at the first p: line, and starts no new payment", async () => {
    // This payment must settle: a service with the default SERVICE_TIMEOUT_MS, not the file's
    // 1.5 s (a loaded machine took longer than that to settle, and the test saw unknown).
    const main = booted;
    booted = await boot(devnet, { store, models: models.registry });
    onTestFinished(async () => {
      await booted.close();
      await dropSchema(booted.schema);
      booted = main;
    });
    const { server, url } = await listen(booted.running.service.app, { host: "127.0.0.1", port: 0 });
    try {
      // The payment is still in flight when the client goes away.
      await devnet.faults.set({ settleDelayMs: 400 });
      const before = await evmBalances(devnet);
      const script = `disconnect-${store}`;
      const options = {
        wallet: payer(),
        token: devnet.manifest.devToken,
        message: models.script(script, [[payCall(devnet)], [payCall(devnet, "news")]]),
      };
      const client = new AbortController();
      const response = await fetch(`${url}/api/chat`, {
        ...chatRequest(chatBody(options), chatHeaders(options)),
        signal: client.signal,
      });
      const requestId = response.headers.get("x-request-id") ?? "";
      const reader = response.body?.getReader();
      if (!reader) throw new Error("no body");
      let seen = "";
      while (!/(^|\n)p:/.test(seen)) {
        const chunk = await reader.read();
        if (chunk.done) throw new Error("stream ended before a p: line");
        seen += new TextDecoder().decode(chunk.value);
      }
      client.abort();
      await reader.cancel().catch(() => {});

      const ledger = ledgerOf(booted.running);
      const settled = await poll(
        async () => {
          const rows = await ledger.listByScope(requestId);
          return rows.some((r) => r.status === "settled") ? rows : undefined;
        },
        10_000,
        "the settled row",
      );
      expect(settled).toHaveLength(1);
      expect(settled[0]?.txHash).toMatch(/^0x[0-9a-f]{64}$/);

      // The turn ends without asking the model for its next step (the second payment).
      await poll(
        async () => (booted.running.service.lifecycle.openTurns === 0 ? true : undefined),
        5_000,
        "the turn to end",
      );
      expect(await ledger.listByScope(requestId)).toHaveLength(1);
      expect(models.steps.get(script)).toBe(1);
      const after = await evmBalances(devnet);
      expect(before.payer - after.payer).toBe(priceOf(devnet, "weather"));
    } finally {
      if ("closeAllConnections" in server) server.closeAllConnections();
      await closeServer(server);
    }
  });

  it("resolves a settlement that hangs after the chain moved: settled from the chain, paid once", async () => {
    try {
      await devnet.faults.set({ settleHangAfterChain: true });
      const before = await evmBalances(devnet);
      const result = await chat(booted.running, { wallet: payer(), token: devnet.manifest.devToken });
      const rows = await ledgerOf(booted.running).listByScope(result.requestId);
      expect(rows).toHaveLength(1);
      const row = rows[0];
      expect(row?.status).toBe("settled");
      expect(row?.txHash).toMatch(/^0x[0-9a-f]{64}$/);
      expect(row?.history.map((h) => h.status)).toEqual([
        "reserved",
        "signed",
        "submitted",
        "unknown",
        "settled",
      ]);
      expect(result.payments.map((p) => p.status)).toEqual([
        "quoted",
        "reserved",
        "signed",
        "submitted",
        "settled",
      ]);
      expect(result.payments.at(-1)?.transaction).toBe(row?.txHash);
      expect(result.finish.transactions).toEqual([row?.txHash]);
      // Paid, but the service never answered: not a failed payment, an unavailable service.
      expect(result.finish.transactionHash).toBe(row?.txHash);
      expect(result.finish.finishReason).toBe("service-unavailable");
      expect(result.errors).toEqual([
        expect.objectContaining({
          code: "service_undelivered",
          paymentId: row?.paymentId,
          transaction: row?.txHash,
        }),
      ]);
      expect(result.errors[0]?.message).toContain("settled on chain");
      const after = await evmBalances(devnet);
      expect(before.payer - after.payer).toBe(priceOf(devnet, "weather"));
    } finally {
      await devnet.faults.reset();
    }
  });

  it("reconciles unknown payments on restart: a used authorization -> settled, an expired unused one -> failed", async () => {
    const where = await durableStore(store);
    const first = await boot(devnet, { store, models: models.registry, ...where });
    let paid: PaymentRecord | undefined;
    const ids = { used: `pay_${randomUUID()}`, expired: `pay_${randomUUID()}`, open: `pay_${randomUUID()}` };
    try {
      // A real payment gives an authorization the chain has used.
      const result = await chat(first.running, { wallet: payer(), token: devnet.manifest.devToken });
      expect(result.finish.finishReason).toBe("payment-complete");
      const ledger = ledgerOf(first.running);
      paid = (await ledger.listByScope(result.requestId))[0];
      expect(paid?.status).toBe("settled");
      if (!paid) throw new Error("no paid row");
      const auth = paid.authorization as { from: string; validBefore: string };
      const nowS = Math.floor(Date.now() / 1000);
      const unused = (validBefore: number) => ({
        kind: "evm-eip3009",
        from: auth.from,
        nonce: `0x${randomBytes(32).toString("hex")}`,
        validBefore: String(validBefore),
      });
      // Rows a crashed process left unclear: same authorization as the paid one (used on chain),
      // a never-used one whose validBefore has passed, and a never-used one still valid.
      await leaveUnknown(ledger, paid, ids.used, paid.authorization);
      await leaveUnknown(ledger, paid, ids.expired, unused(nowS - 120));
      await leaveUnknown(ledger, paid, ids.open, unused(nowS + 3600));
      expect((await ledger.get(ids.used))?.status).toBe("unknown");
    } finally {
      await first.close();
    }

    const second = await boot(devnet, { store, models: models.registry, ...where });
    try {
      const ledger = ledgerOf(second.running);
      const used = await ledger.get(ids.used);
      expect(used?.status).toBe("settled");
      expect(used?.txHash).toBe(paid?.txHash);
      expect((await ledger.get(ids.expired))?.status).toBe("failed");
      // Still within validBefore and unused: stays unknown, and keeps counting as spent.
      expect((await ledger.get(ids.open))?.status).toBe("unknown");
      expect(await second.running.payments?.reconciler.sweep()).toEqual({ resolved: 0, unresolved: 1 });
      const spent = await ledger.spending(payer(), new Date());
      expect(spent.unknown).toBe(priceOf(devnet, "weather"));
    } finally {
      await second.close();
      await dropSchema(where.schema);
    }
  });
});

/** Write a row as a crashed attempt would leave it: reserved -> signed -> submitted -> unknown. */
async function leaveUnknown(ledger: Ledger, like: PaymentRecord, paymentId: string, authorization: unknown) {
  const now = new Date();
  const reserved = await ledger.reserve({
    paymentId,
    wallet: like.wallet,
    scopeId: randomUUID(),
    service: like.service,
    network: like.network,
    asset: like.asset,
    payTo: like.payTo,
    amount: like.amount,
    requirement: like.requirement,
    limits: SUGGESTED_LIMITS.defaults,
    now,
  });
  expect(reserved.ok).toBe(true);
  await ledger.transition(paymentId, "signed", { authorization }, now);
  await ledger.transition(paymentId, "submitted", {}, now);
  await ledger.transition(paymentId, "unknown", { error: "process ended mid-payment" }, now);
}
