import { describe, expect, it } from "vitest";
import { type LandedTransaction, TransactionHistory } from "./history.js";

let n = 0;
function tx(slot: number, accounts: string[] = ["payer", "merchant"]): LandedTransaction {
  n++;
  return {
    signature: `sig${n}`,
    slot,
    blockTime: slot,
    wire: new Uint8Array([n]),
    err: null,
    fee: 5000,
    logs: [],
    accounts,
    preBalances: [],
    postBalances: [],
    computeUnits: 0,
    memo: null,
  };
}
const signatures = (list: LandedTransaction[]) => list.map((t) => t.signature);

describe("the Solana devnet's bounded transaction history", () => {
  it("lists an address's transactions newest first, paged with before and until", () => {
    const history = new TransactionHistory({ maxAgeSlots: 1000, maxEntries: 1000, minAgeSlots: 10 });
    const all = [tx(1), tx(2, ["other"]), tx(3), tx(4), tx(5)];
    for (const t of all) history.add(t);
    const payer = all.filter((t) => t.accounts.includes("payer")).reverse();
    expect(signatures(history.forAddress("payer", { limit: 10 }))).toEqual(signatures(payer));
    expect(signatures(history.forAddress("payer", { limit: 2 }))).toEqual(signatures(payer.slice(0, 2)));
    const page2 = history.forAddress("payer", { limit: 2, before: payer[1]?.signature ?? "" });
    expect(signatures(page2)).toEqual(signatures(payer.slice(2, 4)));
    const until = history.forAddress("payer", { limit: 10, until: payer[2]?.signature ?? "" });
    expect(signatures(until)).toEqual(signatures(payer.slice(0, 2)));
    expect(history.forAddress("payer", { limit: 10, before: "unknown" })).toEqual([]);
    expect(history.forAddress("nobody", { limit: 10 })).toEqual([]);
    expect(() => history.add(all[0] as LandedTransaction)).toThrow(/already landed/);
  });

  it("drops what is older than its age, and says from which slot on everything is kept", () => {
    const history = new TransactionHistory({ maxAgeSlots: 100, maxEntries: 1000, minAgeSlots: 10 });
    const old = tx(5);
    const kept = tx(60);
    history.add(old);
    history.add(kept);
    history.prune(150);
    expect(history.firstAvailableSlot).toBe(50);
    expect(history.get(old.signature)).toBeUndefined();
    expect(history.get(kept.signature)?.signature).toBe(kept.signature);
    expect(signatures(history.forAddress("payer", { limit: 10 }))).toEqual([kept.signature]);
    expect(history.size).toBe(1);
  });

  it("keeps at most maxEntries, dropping whole slots, never one where a blockhash is still valid", () => {
    const history = new TransactionHistory({ maxAgeSlots: 10_000, maxEntries: 3, minAgeSlots: 10 });
    const a = tx(1);
    const b1 = tx(2);
    const b2 = tx(2);
    const c = tx(3);
    const recent = [tx(95), tx(96), tx(97)];
    for (const t of [a, b1, b2, c, ...recent]) history.add(t);
    history.prune(100);
    // 7 kept > 3: slots 1..3 go whole; the last 10 slots stay whatever the count.
    expect(history.firstAvailableSlot).toBe(4);
    expect(history.size).toBe(3);
    for (const t of recent) expect(history.get(t.signature)?.signature).toBe(t.signature);
    history.add(tx(98));
    history.prune(100);
    expect(history.size).toBe(4);
    expect(history.firstAvailableSlot).toBe(4);
    history.prune(108);
    // Now slot 95 is past the protected window: it goes.
    expect(history.size).toBe(3);
    expect(history.firstAvailableSlot).toBe(96);
  });

  it("stays bounded over a long run: memory and lookups do not grow with what was dropped", () => {
    const history = new TransactionHistory({ maxAgeSlots: 500, maxEntries: 2_000, minAgeSlots: 150 });
    for (let slot = 1; slot <= 20_000; slot++) {
      history.add(tx(slot, ["payer", "merchant", `fresh${slot % 7}`]));
      history.add(tx(slot, ["payer-2", "merchant"]));
      if (slot % 10 === 0) history.prune(slot);
    }
    expect(history.size).toBeLessThanOrEqual(1_000 + 20);
    expect(history.firstAvailableSlot).toBeGreaterThanOrEqual(19_500);
    const page = history.forAddress("merchant", { limit: 5000 });
    expect(page.length).toBe(history.size);
    expect(page.every((t) => t.slot >= history.firstAvailableSlot)).toBe(true);
  });
});
