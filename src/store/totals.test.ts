import { PGlite } from "@electric-sql/pglite";
import { drizzle } from "drizzle-orm/pglite";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Ledger, LedgerReads } from "../payments/ports/index.js";
import { pgliteQuery } from "./index.js";
import { PgLedger } from "./ledger.js";
import { migrate } from "./migrate.js";
import { MIGRATIONS } from "./migrations/index.js";
import { at, HOUR, newWallet, payment, roomy, T0, USD } from "./testing/fixtures.js";

/**
 * The running totals of migration 6 (docs/payments.md, "Running totals"): built from the payments
 * a database already holds, kept when an older process writes, and read instead of the rows, so
 * a check reads as many payment rows for a wallet with hundreds of payments as for a new one.
 */

let client: PGlite;
let ledger: Ledger & LedgerReads;

const raw = async (text: string, params: unknown[] = []) => (await client.query(text, params)).rows;

/** `count` settled payments of one atomic unit each, in the hour before T0, straight into the table. */
async function seed(wallet: string, count: number, status = "settled"): Promise<void> {
  await raw(
    `INSERT INTO payments (payment_id, status, history, wallet, request_id, service, network, asset,
        pay_to, amount, requirement, created_at, updated_at)
      SELECT $1 || '_' || g, $2, '[]'::jsonb, $1, $1 || '_req_' || (g % 7), 'https://a.example/',
        'eip155:31337', '0xasset', '0xpayee', 1, '{}'::jsonb,
        $3::timestamptz - g * interval '10 seconds', $3::timestamptz
      FROM generate_series(1, $4::int) g`,
    [wallet, status, T0.toISOString(), count],
  );
}

beforeEach(async () => {
  client = new PGlite("memory://");
  ledger = new PgLedger(drizzle(client), pgliteQuery(client));
});
afterEach(async () => {
  await client.close();
});

// PGlite's migrations alone take seconds on a loaded machine.
describe("running spend totals", { timeout: 180_000 }, () => {
  it("are built from the payments a database of the previous version holds, and kept when an older process reserves", async () => {
    const db = drizzle(client);
    await migrate(
      db,
      "public",
      MIGRATIONS.filter((m) => m.id <= 5),
    );
    const wallet = newWallet();
    await seed(wallet, 30);
    await seed(`${wallet}_x`, 5, "unknown");
    await raw(`UPDATE payments SET wallet = $1 WHERE wallet = $2`, [wallet, `${wallet}_x`]);
    await seed(`${wallet}_r`, 4, "released");
    await raw(`UPDATE payments SET wallet = $1 WHERE wallet = $2`, [wallet, `${wallet}_r`]);
    // A pending payment of a request, reserved by migration 4's function (an older process; migration 5's keeps it),
    // called as that version's ledger called it: its status lists typed, which is what picks it among
    // the overloads of the same length (migration 11's takes a caller and a cap there).
    const older = (id: string) =>
      raw(
        `SELECT outcome FROM reserve_payment($1, $2, 'req_old', 's', 'n', 'a', 'p', 1000000, '{}'::jsonb,
          NULL, 'reserved', '[]'::jsonb, $3::timestamptz, $4::timestamptz, 100000000, 100000000,
          1000000000, '{reserved,signed,submitted,settled,unknown}'::text[], '{reserved,signed,submitted}'::text[])`,
        [id, wallet, T0.toISOString(), at(-24 * HOUR).toISOString()],
      );
    expect(await older("pay_old_1")).toEqual([{ outcome: "reserved" }]);

    // 6 and every migration after it (those appended later run too).
    expect(await migrate(db, "public")).toEqual(MIGRATIONS.map((m) => m.id).filter((id) => id >= 6));
    expect(await ledger.spending(wallet, T0)).toEqual({
      settled: 30n,
      pending: USD,
      unknown: 5n,
      today: USD + 35n,
    });
    expect(await ledger.budget(wallet, "req_old", T0)).toEqual({
      daySpent: 35n,
      dayPending: USD,
      requestSpent: 0n,
      requestPending: USD,
    });
    // An older process still running reserves through its own function: the totals follow.
    expect(await older("pay_old_2")).toEqual([{ outcome: "reserved" }]);
    expect((await ledger.budget(wallet, "req_old", T0)).requestPending).toBe(2n * USD);
    await ledger.transition("pay_old_2", "released", {}, T0);
    expect((await ledger.budget(wallet, "req_old", T0)).requestPending).toBe(USD);
  });

  it("by caller (migration 11) are built from the payments already there, and kept when an older process reserves", async () => {
    const db = drizzle(client);
    await migrate(
      db,
      "public",
      MIGRATIONS.filter((m) => m.id <= 9),
    );
    const [wallet, other] = [newWallet(), newWallet()];
    const key = `key_${wallet}`;
    await seed(wallet, 30);
    await seed(other, 5, "unknown");
    await raw(`UPDATE payments SET caller = $1 WHERE wallet IN ($2, $3)`, [key, wallet, other]);
    // A reservation by migration 6's function (an older process), recording the caller.
    const older = (id: string, from: string) =>
      raw(
        `SELECT outcome FROM reserve_payment($1, $2, 'req_old', 's', 'n', 'a', 'p', 1000000::numeric,
          '{}'::jsonb, NULL::jsonb, 'reserved', '[]'::jsonb, $3::timestamptz, $4::timestamptz,
          100000000::numeric, 100000000::numeric, 1000000000::numeric, $5::text)`,
        [id, from, T0.toISOString(), at(-24 * HOUR).toISOString(), key],
      );
    expect(await older("pay_old_1", wallet)).toEqual([{ outcome: "reserved" }]);

    expect(await migrate(db, "public")).toEqual(MIGRATIONS.filter((m) => m.id > 9).map((m) => m.id));
    expect(await ledger.budget(other, "req_old", T0, key)).toMatchObject({
      daySpent: 5n,
      callerSpent: 35n,
      callerPending: USD,
    });
    // The older process goes on reserving, from either wallet: the key's totals follow.
    expect(await older("pay_old_2", other)).toEqual([{ outcome: "reserved" }]);
    expect((await ledger.budget(wallet, "req_old", T0, key)).callerPending).toBe(2n * USD);
    await ledger.transition("pay_old_2", "released", {}, T0);
    expect((await ledger.budget(wallet, "req_old", T0, key)).callerPending).toBe(USD);
    // And this version's reservation holds the key to its cap over both wallets.
    const capped = { ...roomy, callerDaily: USD + 35n };
    expect(
      await ledger.reserve(payment({ wallet: other, caller: key, amount: 1n, limits: capped })),
    ).toMatchObject({ ok: false, limit: "daily", limitAtomic: USD + 35n, remainingAtomic: 0n });
  });

  it("make a check read as many payment rows for a wallet with 500 payments as for a new one", async () => {
    await migrate(drizzle(client), "public");
    const busy = newWallet();
    const fresh = newWallet();
    await seed(busy, 500);
    // The busy wallet's payments are a key's too (its day is read by caller, migration 11).
    await raw(`UPDATE payments SET caller = $1 WHERE wallet = $1`, [busy]);
    // Payment rows read so far (sequential and index fetches). The counters may include earlier
    // transactions not yet flushed to the statistics, so an operation's count is a difference
    // taken within one transaction (nothing is flushed inside it), rolled back afterwards.
    const counter = async () => {
      const [row] = await raw(
        `SELECT seq_tup_read + coalesce(idx_tup_fetch, 0) AS n FROM pg_stat_xact_user_tables
          WHERE relname = 'payments'`,
      );
      return Number((row as { n: number } | undefined)?.n ?? 0);
    };
    const rowsRead = async (operation: () => Promise<unknown>): Promise<number> => {
      await client.exec("BEGIN");
      try {
        const before = await counter();
        await operation();
        return (await counter()) - before;
      } finally {
        await client.exec("ROLLBACK");
      }
    };
    const awaiting = async (wallet: string) => {
      const { limits: _limits, ...facts } = payment({ wallet, now: at(1) });
      await ledger.recordAwaiting({ ...facts, caller: null, approval: {}, expiresAt: at(HOUR) });
      return facts.paymentId;
    };
    const waiting = { busy: await awaiting(busy), fresh: await awaiting(fresh) };
    const costs = async (wallet: string, scopeId: string, awaitingId: string) => ({
      reserve: await rowsRead(() => ledger.reserve(payment({ wallet, scopeId, now: at(2) }))),
      budget: await rowsRead(() => ledger.budget(wallet, scopeId, at(2))),
      capped: await rowsRead(() =>
        ledger.reserve(
          payment({ wallet, scopeId, caller: wallet, limits: { ...roomy, callerDaily: USD }, now: at(2) }),
        ),
      ),
      approve: await rowsRead(async () =>
        ledger.approve({ paymentId: awaitingId, limits: roomy, authorization: {}, now: at(2) }),
      ),
    });
    const busyCosts = await costs(busy, `${busy}_req_3`, waiting.busy);
    expect(busyCosts).toEqual(await costs(fresh, `${fresh}_req_3`, waiting.fresh));
    // And the busy wallet's check still counts every one of its payments.
    expect(await ledger.budget(busy, `${busy}_req_3`, at(2))).toMatchObject({ daySpent: 500n });
    expect(
      await ledger.reserve(payment({ wallet: busy, amount: USD, limits: { ...roomy, daily: USD + 499n } })),
    ).toMatchObject({ ok: false, limit: "daily", remainingAtomic: USD - 1n });
  });
});

describe("one payment per signed Solana transaction (migration 17)", { timeout: 180_000 }, () => {
  it("migrates a database that already holds two payments of one transaction, and refuses a third", async () => {
    const db = drizzle(client);
    await migrate(
      db,
      "public",
      MIGRATIONS.filter((m) => m.id < 17),
    );
    const wallet = newWallet();
    await seed(wallet, 3);
    const svm = JSON.stringify({ kind: "svm-exact", messageHash: "m1", blockhash: "b" });
    await raw(`UPDATE payments SET authorization_data = $1::jsonb WHERE wallet = $2`, [svm, wallet]);

    expect(
      await migrate(
        db,
        "public",
        MIGRATIONS.filter((m) => m.id <= 17),
      ),
    ).toEqual([17]);
    // The earliest keeps its place in the index; the later ones are marked, and nothing else changes.
    const rows = (await raw(
      `SELECT authorization_data->>'signedTwice' AS twice, status FROM payments WHERE wallet = $1
         ORDER BY created_at`,
      [wallet],
    )) as { twice: string | null; status: string }[];
    expect(rows).toEqual([
      { twice: null, status: "settled" },
      { twice: "yes", status: "settled" },
      { twice: "yes", status: "settled" },
    ]);
    const again = payment({ wallet, intent: { authorization: JSON.parse(svm) } });
    await expect(ledger.reserve(again)).rejects.toMatchObject({ name: "SameTransactionError" });
  });
});
