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
