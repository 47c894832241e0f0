/**
 * docs/payments.md#reconciliation: an unclear Solana payment is judged from
 * the chain however many payments of the same wallet came after it. It settled while the service
 * had given up (the facilitator answered too late), then 60 more payments followed: the
 * reconciler finds the right transaction and the ledger equals what moved on chain. A signed
 * transaction that never landed stays `unknown` while its blockhash is valid, whatever the
 * server's clock says, and becomes `failed` only once the chain holds its blockhash expired.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createChains } from "../../src/chains/index.js";
import { solanaResolver } from "../../src/chains/svm-landed.js";
import { type Devnet, startDevnet } from "../../src/devnet/index.js";
import { walletAddress } from "../../src/devnet/testing/index.js";
import type { PaymentRecord } from "../../src/payments/index.js";
import { createReconciler } from "../../src/payments/run/index.js";
import {
  type Booted,
  boot,
  chat,
  dropSchema,
  ledgerOf,
  poll,
  priceOf,
  type StoreKind,
  solanaBalances,
} from "./harness.js";

/** Payments of the same wallet after the unclear one: more than any fixed look-back of 50. */
const LATER_PAYMENTS = 60;
const HOUR_MS = 3_600_000;
/** Later payments made at once (one wallet: the ledger queues their reservations). */
const BATCH = 12;
/**
 * One store: what is under test is the search of the chain's history, the same whatever keeps the
 * ledger (each store's own rules are the ledger contract suite's). PostgreSQL when configured.
 */
const STORE: StoreKind = process.env.DATABASE_URL ? "postgres" : "pglite";

let devnet: Devnet;

beforeAll(async () => {
  // 80 ms slots: a blockhash (150 blocks) expires in about 12 s, so the test waits on the chain,
  // not on a clock, and the payments still settle well within it.
  devnet = await startDevnet({ manifestPath: null, solanaNode: { slotTimeMs: 80 } });
});
afterAll(async () => {
  await devnet?.stop();
});

async function rpc<T>(method: string, params: unknown[]): Promise<T> {
  const url = devnet.manifest.solana?.rpcUrl;
  if (!url) throw new Error("Solana is not running");
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  return ((await response.json()) as { result: T }).result;
}

describe(`Solana reconciliation (${STORE})`, () => {
  let booted: Booted;
  beforeAll(async () => {
    booted = await boot(devnet, {
      store: STORE,
      // A short service timeout, so a late settlement is given up on; no background sweep, so only
      // the reconciler under test judges the payment.
      env: { SERVICE_TIMEOUT_MS: "3000", RECONCILE_INTERVAL_MS: "86400000" },
    });
  });
  afterAll(async () => {
    devnet.faults.reset();
    await booted?.close();
    await dropSchema(booted?.schema);
  });

  const payer = () => walletAddress(devnet, "solana", "payer");
  const token = () => devnet.manifest.devToken;
  /** A reconciler whose clock is an hour ahead: the server's clock alone must prove nothing. */
  const lateReconciler = () => {
    const solana = devnet.manifest.solana;
    if (!solana) throw new Error("Solana is not running");
    return createReconciler({
      ledger: ledgerOf(booted.running),
      chains: createChains({ [solana.network]: solana.rpcUrl }),
      staleMs: 0,
      now: () => new Date(Date.now() + HOUR_MS),
    });
  };
  async function onlyRow(requestId: string): Promise<PaymentRecord> {
    const rows = await ledgerOf(booted.running).listByScope(requestId);
    expect(rows).toHaveLength(1);
    const row = rows[0];
    if (!row) throw new Error("no row");
    return row;
  }
  /** What the ledger holds as spent (settled, or possibly gone) from the Solana payer. */
  async function ledgerSpent(): Promise<bigint> {
    const rows = await ledgerOf(booted.running).listByStatus(["settled", "unknown", "submitted", "signed"]);
    return rows.filter((r) => r.wallet === payer()).reduce((sum, r) => sum + r.amount, 0n);
  }

  it("resolves a late settlement as settled after 60 later payments: ledger equals chain", async (ctx) => {
    if (!devnet.manifest.solana) return ctx.skip();
    const price = priceOf(devnet, "weather");
    const before = await solanaBalances(devnet);
    const spentBefore = await ledgerSpent();

    // The facilitator settles only after the service has given up: the outcome is unclear.
    devnet.faults.set({ settleDelayMs: 5000 });
    const unclear = await chat(booted.running, { wallet: payer(), token: token() });
    const row = await onlyRow(unclear.requestId);
    expect(row.status).toBe("unknown");
    // The settlement lands on chain after all.
    await poll(
      async () => ((await solanaBalances(devnet)).payer === before.payer - price ? true : undefined),
      15_000,
      "the late settlement on chain",
    );
    devnet.faults.reset();

    for (let i = 0; i < LATER_PAYMENTS; i += BATCH) {
      const batch = await Promise.all(
        Array.from({ length: BATCH }, () => chat(booted.running, { wallet: payer(), token: token() })),
      );
      for (const later of batch) {
        expect((await onlyRow(later.requestId)).status).toBe("settled");
      }
    }

    const resolved = await lateReconciler().resolve(row.paymentId);
    expect(resolved?.status).toBe("settled");
    const txHash = resolved?.txHash ?? "";
    // The transaction found is this payment's own: its history reads exactly one transfer.
    const landed = await rpc<{ meta: { err: unknown } } | null>("getTransaction", [
      txHash,
      { encoding: "json", maxSupportedTransactionVersion: 0, commitment: "confirmed" },
    ]);
    expect(landed?.meta.err).toBeNull();
    const others = await ledgerOf(booted.running).listByStatus(["settled"]);
    expect(others.filter((r) => r.txHash === txHash)).toHaveLength(1);

    // The x402 client's memo nonce is kept, so only the history entries carrying it are fetched.
    expect((row.authorization as { memo?: string }).memo).toMatch(/^[0-9a-f]{32}$/);
    // The same answer when the history is read 16 signatures a page (the `before` cursor).
    const paged = await solanaResolver(devnet.manifest.solana.rpcUrl, { pageSize: 16 }).resolve(row);
    expect(paged).toEqual({ status: "settled", txHash, payer: payer() });
    // A row recorded before the blockhash, signing time and memo were kept: searched back to its
    // creation, every transaction read.
    const { blockhash: _b, signedAt: _s, memo: _m, ...legacy } = row.authorization as Record<string, string>;
    const older = { ...row, authorization: legacy };
    expect(await solanaResolver(devnet.manifest.solana.rpcUrl, { pageSize: 16 }).resolve(older)).toEqual(
      paged,
    );

    const after = await solanaBalances(devnet);
    const moved = before.payer - after.payer;
    expect(moved).toBe(price * BigInt(LATER_PAYMENTS + 1));
    expect((await ledgerSpent()) - spentBefore).toBe(moved);
  }, 180_000);

  it("keeps a signed transaction that never landed unknown while its blockhash is valid, then failed", async (ctx) => {
    if (!devnet.manifest.solana) return ctx.skip();
    const before = await solanaBalances(devnet);
    const spentBefore = await ledgerSpent();

    // The facilitator refuses to settle: the payment was signed and sent, nothing reached the chain.
    devnet.faults.set({ settleFail: true });
    const result = await chat(booted.running, { wallet: payer(), token: token() });
    devnet.faults.reset();
    const row = await onlyRow(result.requestId);
    expect(row.status).toBe("unknown");

    // An hour later by the server's clock, but the chain still accepts the blockhash: unknown.
    expect((await lateReconciler().resolve(row.paymentId))?.status).toBe("unknown");
    expect(await ledgerSpent()).toBe(spentBefore + row.amount);
    const blockhash = (row.authorization as { blockhash?: string }).blockhash ?? "";
    expect(blockhash).not.toBe("");

    // The chain moves on past the blockhash's lifetime (the devnet node's `surfnet_timeTravel` to a
    // slot: the 150 slots pass at once instead of in 12 s), and its clock passes an hour.
    const slot = await rpc<number>("getSlot", [{ commitment: "finalized" }]);
    await rpc("surfnet_timeTravel", [{ absoluteSlot: slot + 151 }]);
    await poll(
      async () => {
        const valid = await rpc<{ value: boolean }>("isBlockhashValid", [
          blockhash,
          { commitment: "finalized" },
        ]);
        return valid.value ? undefined : true;
      },
      30_000,
      "the blockhash to expire",
    );
    await rpc("surfnet_timeTravel", [{ absoluteTimestamp: Date.now() + HOUR_MS }]);
    await poll(
      async () => {
        const slot = await rpc<number>("getSlot", [{ commitment: "finalized" }]);
        const time = await rpc<number | null>("getBlockTime", [slot]);
        return time !== null && time * 1000 > Date.now() + HOUR_MS / 2 ? true : undefined;
      },
      10_000,
      "the chain's clock to move",
    );

    const resolved = await lateReconciler().resolve(row.paymentId);
    expect(resolved?.status).toBe("failed");
    expect(resolved?.error).toMatch(/blockhash expired/);
    expect(await ledgerSpent()).toBe(spentBefore);
    expect((await solanaBalances(devnet)).payer).toBe(before.payer);
  }, 120_000);
});
