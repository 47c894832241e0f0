import { PGlite } from "@electric-sql/pglite";
import { drizzle } from "drizzle-orm/pglite";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TabKeeper } from "../payments/tabs/keeper.js";
import type { TabsConfig, TabsDeps } from "../payments/tabs/types.js";
import { migrate } from "./migrate.js";
import { PgTabStore } from "./tabs.js";

/**
 * The keeper's one read of an expired tab's session key (docs/payments.md#tabs), on the real tab
 * store (PGlite) with a chain that answers as each case needs. Found by a black-box run (h55): 20
 * tabs whose reads always failed (their network's RPC gone) kept every later one from being read,
 * and a stranger's dust in a key moved its tab to closing, where a Solana key with no SOL for the
 * fee could never return it.
 */
let client: PGlite;
let store: PgTabStore;
beforeAll(async () => {
  client = new PGlite("memory://");
  const db = drizzle(client);
  await migrate(db, "public");
  store = new PgTabStore(db);
}, 120_000);
afterAll(() => client.close());

const T0 = Date.parse("2026-11-29T12:00:00Z");
const UNREAD = "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1";
const EVM = "eip155:31337";
const AMOUNT = 40_000n;

async function expired(tabId: string, network: string, session: string, at: number): Promise<void> {
  await store.create({
    tabId,
    wallet: "0x000000000000000000000000000000000000dEaD",
    network,
    asset: "0x5fbdb2315678afecb367f032d93f642f64180aa3",
    session,
    caller: null,
    tokenHash: `${tabId}-hash`,
    servesCaller: false,
    amount: AMOUNT,
    opening: {},
    signBy: new Date(at + 60_000),
    endsAt: new Date(at + 3_600_000),
    createdAt: new Date(at),
  });
  expect(await store.move(tabId, "awaiting_signature", "expired", {}, new Date(at + 61_000))).toBe(true);
}

function keeper(balances: Record<string, bigint | Error>, read: string[]): TabKeeper {
  const deps = {
    store,
    chains: {
      connection: () => undefined,
      balance: async (_network: string, _asset: string, owner: string) => {
        read.push(owner);
        const held = balances[owner] ?? 0n;
        if (held instanceof Error) throw held;
        return held;
      },
      resolve: async () => ({ status: "pending" }),
    },
    signers: { draftFor: () => undefined },
    now: () => new Date(T0 + 2 * 3_600_000), // long past every signBy here
  } as unknown as TabsDeps;
  const config = { secret: new Uint8Array(32).fill(7), rpcUrls: {}, publicUrl: "http://127.0.0.1:1" };
  return new TabKeeper(config as unknown as TabsConfig, deps);
}

describe("the keeper's one read of an ended tab's key", () => {
  it("reaches a tab behind twenty older ones whose reads keep failing", async () => {
    const gone = new Error(`no RPC URL configured for ${UNREAD}`);
    const balances: Record<string, bigint | Error> = {};
    for (let i = 0; i < 20; i++) {
      await expired(`tab_unread${i}`, UNREAD, `Unread${i}`, T0 + i);
      balances[`Unread${i}`] = gone;
    }
    await expired("tab_empty", EVM, "0x000000000000000000000000000000000000bEEF", T0 + 1_000);
    const read: string[] = [];
    const k = keeper(balances, read);
    for (let sweep = 0; sweep < 3; sweep++) await k.tick();
    expect(read).toContain("0x000000000000000000000000000000000000bEEF");
    // Read empty: marked, and never listed again; the unreadable ones stay listed.
    const listed = (await store.listUnchecked(new Date(T0 + 3_600_000))).map((t) => t.tabId);
    expect(listed).not.toContain("tab_empty");
    expect(listed).toHaveLength(20);
  });

  it("leaves a stranger's dust where its sender put it: the tab stays expired, read once", async () => {
    const session = "0x000000000000000000000000000000000000d057";
    await expired("tab_dust", EVM, session, T0 + 2_000);
    const read: string[] = [];
    await keeper({ [session]: 1n }, read).tick();
    expect(read).toContain(session);
    expect((await store.get("tab_dust"))?.status).toBe("expired");
    const listed = (await store.listUnchecked(new Date(T0 + 3_600_000))).map((t) => t.tabId);
    expect(listed).not.toContain("tab_dust");
  });
});
