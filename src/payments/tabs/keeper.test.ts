import { describe, expect, it } from "vitest";
import type { TabRecord, TabStatus, TabStore } from "../ports/index.js";
import { TabKeeper } from "./keeper.js";
import { sessionKey } from "./keys.js";
import type { TabsConfig, TabsDeps } from "./types.js";

/**
 * The keeper's return when another finisher got there first (a close beside a sweep, or two
 * instances): the session key is already empty because the other's refund moved it. The tab must
 * not be recorded as closed with nothing returned.
 */

const NETWORK = "eip155:84532";
const config = {
  secret: new Uint8Array(32).fill(7),
  rpcUrls: {},
  publicUrl: "http://127.0.0.1:1",
} as unknown as TabsConfig;

async function closingTab(): Promise<TabRecord> {
  const key = await sessionKey(config, "tab_race", NETWORK);
  if (!key) throw new Error("no session key for an EVM network");
  return {
    tabId: "tab_race",
    wallet: "0x000000000000000000000000000000000000dEaD",
    network: NETWORK,
    asset: "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
    session: key.address,
    status: "closing",
    refund: null,
  } as unknown as TabRecord;
}

/** The store as the other finisher left it: `stored` (what `get` reads now); moves recorded. */
function storeWith(stored: TabRecord) {
  const moves: { to: TabStatus; refunded: bigint | undefined }[] = [];
  const store = {
    get: async () => stored,
    usage: async () => ({ committed: 0n, settled: 0n, inFlight: 0 }),
    move: async (_id: string, _from: TabStatus, to: TabStatus, fields: { refunded?: bigint }) => {
      moves.push({ to, refunded: fields.refunded });
      return true;
    },
    setRefund: async () => true,
    clearRefund: async () => true,
  } as unknown as TabStore;
  return { store, moves };
}

function keeperOn(store: TabStore): TabKeeper {
  const deps = {
    store,
    // The session key holds nothing (any more).
    chains: {
      connection: () => undefined,
      balance: async () => 0n,
      resolve: async () => ({ status: "pending" }),
    },
    signers: { draftFor: () => undefined },
    now: () => new Date("2026-11-28T12:00:00Z"),
  } as unknown as TabsDeps;
  return new TabKeeper(config, deps);
}

describe("TabKeeper.finish with an empty session key", () => {
  it("leaves the record to the finisher whose refund emptied it, never closing it with 0 returned", async () => {
    const read = await closingTab();
    const { store, moves } = storeWith({
      ...read,
      refund: { authorization: { nonce: "0x01" }, amount: "20000" },
    });
    await keeperOn(store).finish(read);
    expect(moves).toEqual([]);
  });

  it("closes it with 0 returned when nothing was ever left and no refund is under way", async () => {
    const read = await closingTab();
    const { store, moves } = storeWith(read);
    await keeperOn(store).finish(read);
    expect(moves).toEqual([{ to: "closed", refunded: 0n }]);
  });
});

/** A promise and the function that settles it: a step held until the test lets it go. */
function held(): { release: () => void; released: Promise<void> } {
  let release = () => {};
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  return { release, released };
}

describe("TabKeeper.finish, two finishers of a tab whose recorded refund never moved", () => {
  // A black-box review (h30): the slower finisher cleared the faster one's fresh refund (any
  // refund, not the one it had found failed), found the session key empty, and closed the tab as
  // "0 returned" while the other's refund of 20000 was landing.
  it("the slower one leaves the other's new refund be; the tab closes with what that returned", async () => {
    const settling = held();
    const resolving = held();
    const withSettler = {
      ...config,
      settler: {
        settle: async () => {
          await settling.released;
          return { kind: "settled", transaction: "0xR2" };
        },
      },
    } as unknown as TabsConfig;
    const first = { authorization: { nonce: "0x01" }, amount: "20000" };
    const row = { ...(await closingTab()), refund: first as unknown, refunded: null as bigint | null };
    const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
    // The PostgreSQL store's conditional writes, in memory.
    const store = {
      get: async () => ({ ...row }),
      usage: async () => ({ committed: 0n, settled: 0n, inFlight: 0 }),
      move: async (_id: string, from: TabStatus, to: TabStatus, fields: { refunded?: bigint }) => {
        if (row.status !== from) return false;
        row.status = to;
        if (fields.refunded !== undefined) row.refunded = fields.refunded;
        return true;
      },
      setRefund: async (_id: string, refund: unknown) => {
        if (row.status !== "closing" || row.refund !== null) return false;
        row.refund = refund;
        return true;
      },
      clearRefund: async (_id: string, refund: unknown) => {
        if (row.status !== "closing" || !same(row.refund, refund)) return false;
        row.refund = null;
        return true;
      },
    } as unknown as TabStore;
    let balances = 0;
    let resolves = 0;
    const deps = {
      store,
      chains: {
        connection: () => ({ transferExtra: async () => ({ name: "USDC", version: "2" }) }),
        // The first finisher reads 20000 left; the second reads after that refund moved it.
        balance: async () => (balances++ === 0 ? 20000n : 0n),
        // The first refund never moved; the second finisher's read of it is the slower.
        resolve: async () => {
          if (resolves++ === 1) await resolving.released;
          return { status: "failed", error: "unused past validBefore" };
        },
      },
      signers: { draftFor: () => undefined },
      now: () => new Date(),
    } as unknown as TabsDeps;
    const snapshot = { ...row } as TabRecord;
    const a = new TabKeeper(withSettler, deps).finish(snapshot);
    const b = new TabKeeper(withSettler, deps).finish(snapshot);
    for (let i = 0; i < 400 && (row.refund === null || row.refund === first); i++)
      await new Promise((resolve) => setTimeout(resolve, 5));
    expect(row.refund).toMatchObject({ amount: "20000" }); // the first finisher's new refund, sending
    resolving.release();
    await b;
    settling.release();
    await a;
    expect(row).toMatchObject({ status: "closed", refunded: 20000n });
  });
});
